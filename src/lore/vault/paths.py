"""Where a vault and its index are: the folder checked, the index path, the `.lore`
folder made safely, and folders too broad to index without asking."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import LoreSettings
from ..errors import ConfigError, VaultError, shown
from ..store.sqlite import default_db_path

if TYPE_CHECKING:
    # Indexing and checking are imported when called: a one-shot `lore search` process
    # pays for what it runs (YAML, the ignore rules, the embedder are not on its path).
    pass


def resolve_vault(path: str | os.PathLike[str]) -> Path:
    if "\x00" in str(path):
        raise VaultError(f"vault {str(path)!r}: a path cannot contain NUL")
    raw = Path(path).expanduser()
    if not raw.exists():
        raise VaultError(f"vault {shown(str(raw))} does not exist")
    if not raw.is_dir():
        raise VaultError(f"vault {shown(str(raw))} is not a folder")
    resolved = raw.resolve()
    try:
        str(resolved).encode("utf-8")
    except UnicodeEncodeError:  # SQLite and the index store paths as UTF-8 text
        raise VaultError(
            f"vault {shown(str(resolved))}: its path is not valid UTF-8",
            hint="rename the folder (or one above it) to a UTF-8 name",
        ) from None
    return resolved


def prepare_index_folder(root: Path) -> None:
    """Make `<vault>/.lore` (never through a symlink) and refuse index files there that
    are links: a vault could ship `.lore/index.sqlite` pointing at another vault's index,
    or at any file of yours, for SQLite to write into."""
    from ..safe_write import open_folder
    from ..store.sqlite import DEFAULT_DB_NAME

    with open_folder(root, ".lore") as folder:
        for suffix in ("", "-wal", "-shm", "-journal"):
            folder.check_target(DEFAULT_DB_NAME + suffix)


def index_path(root: Path, settings: LoreSettings) -> Path:
    """Where the index of this vault is (--db / LORE_DB / config, else .lore/index.sqlite)."""
    if isinstance(settings.db, str):
        raise ConfigError(f"{settings.db.split('@')[-1]}: a database URL, not an index file")
    db_path = settings.db if settings.db is not None else default_db_path(root)
    return db_path if db_path.is_absolute() else Path.cwd() / db_path


def broad_folder(root: Path) -> str | None:
    """What `root` is when it is too broad to index without asking twice: the home folder
    or the root of a file system (every Markdown file of every project under it)."""
    if root == Path(root.anchor):
        return "the root of the file system"
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError):  # no home folder known
        return None
    return "your home folder" if root == home else None
