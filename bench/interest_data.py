"""The vaults bench.interest measures: a private copy of bench.semantic's embedded vault
(index copied with SQLite's backup API: another process may be writing it), the same set
as plain notes with and without their titles, and each note's true article."""

from __future__ import annotations

import shutil
from pathlib import Path

from bench.datasets import REPO_ROOT
from bench.lore_system import note_text

WORK = REPO_ROOT / "bench" / ".work" / "interest"
SEMANTIC = REPO_ROOT / "bench" / ".work" / "semantic"


def backup_index(source: Path, target: Path) -> None:
    """A consistent copy of an SQLite file (another process may be writing it)."""
    import apsw

    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    src = apsw.Connection(
        f"file:{source}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    )
    dst = apsw.Connection(str(target))
    with dst.backup("main", src, "main") as backup:
        backup.step()
    dst.close()
    src.close()


def embedded_complete(vault: Path) -> bool:
    import apsw

    db = vault / ".lore" / "index.sqlite"
    if not db.is_file():
        return False
    con = apsw.Connection(
        f"file:{db}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    )
    try:
        notes = con.execute("SELECT count(*) FROM notes").fetchone()[0]
        done = con.execute(
            "SELECT count(DISTINCT t.note_id) FROM note_texts t JOIN vec_texts v ON v.hash = t.hash"
            " AND v.space = 'doc' WHERE t.kind = 'summary'"
        ).fetchone()[0]
    finally:
        con.close()
    return bool(notes) and done == notes


def vector_vault(name: str) -> tuple[str, Path, str | None]:
    """(set used, a private copy of its embedded vault, a note when it is the subset)."""
    note = None
    source = SEMANTIC / name / "vault"
    if not embedded_complete(source):
        fallback = f"{name}-24a"
        note = f"{name} is not fully embedded yet: the 24-article subset {fallback} is used"
        name, source = fallback, SEMANTIC / fallback / "vault"
        if not embedded_complete(source):
            raise SystemExit(f"no embedded index under {source}: run bench.semantic --embed-only")
    target = WORK / name / "vault"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".lore"))
    backup_index(source / ".lore" / "index.sqlite", target / ".lore" / "index.sqlite")
    (target.parent / "embedded").write_text("copied from bench.semantic's index\n")
    return name, target, note


def plain_vault(name: str, *, titles: bool) -> Path:
    """The set written as notes (no index yet); without titles, a note is just its text."""
    from bench import longnotes

    ds = longnotes.load_any(name)
    target = WORK / f"{name}-{'text' if titles else 'notitle'}" / "vault"
    if target.exists():
        shutil.rmtree(target)
    (target / "notes").mkdir(parents=True)
    for i, doc in enumerate(ds.docs):
        front = {"id": doc.id, "title": doc.title} if titles else {"id": f"p{i:05d}"}
        text = note_text(front, doc.text)
        (target / "notes" / f"p{i:05d}.md").write_text(text, encoding="utf-8")
    return target


def truth(vault: Path, name: str) -> dict[str, str]:
    """note path → the article its paragraph came from (by the front matter id)."""
    import yaml

    from bench import longnotes

    ds = longnotes.load_any(name)
    article = {d.id: d.title for d in ds.docs}
    by_index = {f"p{i:05d}": d.title for i, d in enumerate(ds.docs)}
    out = {}
    for path in sorted((vault / "notes").glob("*.md")):
        front = yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])
        doc_id = str(front["id"])
        out[f"notes/{path.name}"] = article.get(doc_id) or by_index[doc_id]
    return out
