"""What a scan leaves out, like the tools users know: hidden files and folders (`.github`,
`.vscode`: Obsidian shows none of them), the folders tools make (virtual environments,
package caches, build output), the vault's `.gitignore` files (each one for
its own folder and below, as git reads them; switch off with `gitignore = false`), and the
vault's `.loreignore`, read last so it can take back any of the above (`!build/`).

A folder holding `pyvenv.cfg` is a Python virtual environment whatever its name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pathspec

# Folders tools make, never notes: gitignore patterns (any depth), so `.loreignore` can
# take one back with `!name/`.
DEFAULT_IGNORES = (
    ".*", "venv/", "node_modules/", "__pycache__/", ".cache/", "dist/", "build/",
    "vendor/", ".trash/", ".tox/", ".mypy_cache/", ".pytest_cache/", ".ruff_cache/",
    "site-packages/",
)  # fmt: skip
GITIGNORE = ".gitignore"
MAX_GITIGNORE_BYTES = 256 * 1024  # a larger one is read up to here
VENV_MARKER = "pyvenv.cfg"

_DEFAULTS = pathspec.GitIgnoreSpec.from_lines(DEFAULT_IGNORES)


def _read_gitignore(folder: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(folder / GITIGNORE, "rb") as handle:
            data = handle.read(MAX_GITIGNORE_BYTES)
    except OSError:  # none, or unreadable: git would not apply it either
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    return pathspec.GitIgnoreSpec.from_lines(lines) if any(s.strip() for s in lines) else None


@dataclass(frozen=True)
class Ignores:
    """The rules in force inside one folder of the vault. `layers` are (folder relative to
    the vault with a trailing slash or "", its rules), outermost first; `last` is the
    vault's .loreignore, which wins over every layer."""

    layers: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]
    last: pathspec.GitIgnoreSpec
    gitignore: bool

    @classmethod
    def for_vault(
        cls, root: Path, loreignore: pathspec.GitIgnoreSpec, *, gitignore: bool = True
    ) -> Ignores:
        layers: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = (("", _DEFAULTS),)
        own = _read_gitignore(root) if gitignore else None
        if own is not None:
            layers += (("", own),)
        return cls(layers, loreignore, gitignore)

    def enter(self, folder: Path, rel_folder: str) -> Ignores:
        """The rules inside `folder` (vault-relative `rel_folder`, ending in "/")."""
        own = _read_gitignore(folder) if self.gitignore else None
        if own is None:
            return self
        return Ignores((*self.layers, (rel_folder, own)), self.last, self.gitignore)

    def ignored(self, rel: str, *, folder: bool) -> bool:
        """Is the vault-relative path `rel` left out? The last rule that speaks wins."""
        name = rel + "/" if folder else rel
        verdict: bool | None = None
        for prefix, spec in self.layers:
            if name.startswith(prefix):
                found = spec.check_file(name[len(prefix) :]).include
                verdict = found if found is not None else verdict
        found = self.last.check_file(name).include
        return bool(found if found is not None else verdict)


def is_virtualenv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, VENV_MARKER))
