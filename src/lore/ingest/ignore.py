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

# Folders tools make, never notes, at any depth (and every hidden file or folder): checked
# by name first, and `.loreignore` can take one back with `!name/`.
DEFAULT_IGNORED_DIRS = frozenset(
    {"venv", "node_modules", "__pycache__", "dist", "build", "vendor", "site-packages"}
)
GITIGNORE = ".gitignore"
MAX_GITIGNORE_BYTES = 256 * 1024  # a larger one is read up to here
VENV_MARKER = "pyvenv.cfg"


def _default(rel: str, *, folder: bool) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.startswith(".") or (folder and name in DEFAULT_IGNORED_DIRS)


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
    """The rules in force inside one folder of the vault: the defaults, then `layers`
    ((folder relative to the vault with a trailing slash or "", its .gitignore), outermost
    first), then `last`, the vault's .loreignore, which wins over every layer."""

    layers: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]
    last: pathspec.GitIgnoreSpec
    gitignore: bool

    @classmethod
    def for_vault(
        cls, root: Path, loreignore: pathspec.GitIgnoreSpec, *, gitignore: bool = True
    ) -> Ignores:
        layers: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()
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
        verdict = _default(rel, folder=folder)
        for prefix, spec in self.layers:
            if name.startswith(prefix):
                found = spec.check_file(name[len(prefix) :]).include
                verdict = found if found is not None else verdict
        if self.last.patterns:
            found = self.last.check_file(name).include
            verdict = found if found is not None else verdict
        return verdict


def is_virtualenv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, VENV_MARKER))
