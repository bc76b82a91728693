"""The real vaults and their hand-written query sets, for bench.realvault.

The vaults are public note collections packed as `<name>.tar.gz` under `../shared/data/vaults/`
(or `$LORE_BENCH_DATA/vaults/`). They are unpacked into `bench/.work/realvault/` (git-ignored,
never committed) and read in place. The queries live in `bench/realvault_queries/<name>.jsonl`,
one JSON object a line:

    {"id": "...", "kind": "known_item", "query": "...", "relevant": ["a/b.md"], "note": "..."}

`relevant` holds vault-relative POSIX paths; `note` is optional. `python -m bench.realvault_data`
checks every query file (and, when the archives are present, that every relevant path exists).
"""

from __future__ import annotations

import json
import shutil
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bench.datasets import REPO_ROOT, Doc, data_root

VAULTS = ("mynote", "obsidian-hub")
QUERIES_DIR = REPO_ROOT / "bench" / "realvault_queries"
WORK_DIR = REPO_ROOT / "bench" / ".work" / "realvault"
MIN_QUERIES = 60
MAX_QUERY_CHARS = 80  # short queries only: a query set must never quote the notes at length
UNPACK_VERSION = 1  # bump when unpack() changes, so cached trees are unpacked again

# `mixed` (Chinese and English in one query) applies to Chinese vaults; the English vault uses
# `common` instead: a specific word next to a word nearly every note there holds ("plugin").
KINDS: dict[str, str] = {
    "known_item": "the user remembers the note: its title in other words, its alias, its subject",
    "topic": "a spoken-style question in other words than the note uses",
    "mixed": "a short Chinese-English query (AI 编程, Python 教程)",
    "common": "a short query pairing a specific word with a word most notes hold",
    "deep": "a detail past the first 2,000 characters of a long note",
}
NOTE_SUFFIXES = (".md", ".markdown")
# The folders every note tool skips. Nothing else is left out: the corpus is the same for lore
# and the baselines, whatever ignore rules lore applies (the run reports any difference).
SKIP_DIRS = frozenset({".git", ".obsidian", ".trash", ".lore"})


@dataclass(frozen=True)
class RvQuery:
    id: str
    kind: str
    query: str
    relevant: tuple[str, ...]
    note: str = ""


def archive_path(name: str) -> Path:
    return data_root() / "vaults" / f"{name}.tar.gz"


def query_file(name: str) -> Path:
    return QUERIES_DIR / f"{name}.jsonl"


# --- queries ------------------------------------------------------------------------------


def _relevant_path(where: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}: every relevant entry must be a non-empty string")
    posix = PurePosixPath(value)
    if "\\" in value or posix.is_absolute() or ".." in posix.parts or str(posix) != value:
        raise ValueError(f"{where}: relevant path {value!r} is not a clean vault-relative path")
    return value


def parse_query(where: str, line: str) -> RvQuery:
    """One query line; a ValueError names `where` (file:line) and what is wrong."""
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: bad JSON: {exc}") from None
    if not isinstance(row, dict):
        raise ValueError(f"{where}: expected a JSON object")
    unknown = set(row) - {"id", "kind", "query", "relevant", "note"}
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}")
    qid, kind, text = row.get("id"), row.get("kind"), row.get("query")
    if not isinstance(qid, str) or not qid.strip():
        raise ValueError(f"{where}: `id` must be a non-empty string")
    if kind not in KINDS:
        raise ValueError(f"{where}: kind {kind!r} is not one of {sorted(KINDS)}")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{where}: `query` must be a non-empty string")
    if len(text) > MAX_QUERY_CHARS:
        raise ValueError(f"{where}: query is {len(text)} characters, over {MAX_QUERY_CHARS}")
    relevant = row.get("relevant")
    if not isinstance(relevant, list) or not relevant:
        raise ValueError(f"{where}: `relevant` must be a non-empty list of paths")
    paths = tuple(_relevant_path(where, p) for p in relevant)
    if len(set(paths)) != len(paths):
        raise ValueError(f"{where}: a relevant path is listed twice")
    note = row.get("note", "")
    if not isinstance(note, str):
        raise ValueError(f"{where}: `note` must be a string")
    return RvQuery(id=qid, kind=kind, query=text, relevant=paths, note=note)


def load_queries(path: Path, min_count: int = MIN_QUERIES) -> list[RvQuery]:
    """Every query of one file, checked; raises ValueError naming the file and line."""
    queries: list[RvQuery] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            query = parse_query(f"{path.name}:{lineno}", line)
            if query.id in seen:
                raise ValueError(f"{path.name}:{lineno}: duplicate id {query.id!r}")
            seen.add(query.id)
            queries.append(query)
    if len(queries) < min_count:
        raise ValueError(f"{path.name}: {len(queries)} queries, at least {min_count} needed")
    return queries


def missing_relevant(queries: list[RvQuery], note_paths: set[str]) -> list[str]:
    """`id: path` for every relevant path that is not a note of the vault."""
    return [f"{q.id}: {p}" for q in queries for p in q.relevant if p not in note_paths]


# --- vaults -------------------------------------------------------------------------------


def _safe_members(tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """Regular files and folders that stay inside the target; links and devices are left
    out (the archives hold Markdown only), so extraction can never write outside WORK_DIR."""
    members = []
    for m in tar.getmembers():
        parts = PurePosixPath(m.name).parts
        if m.name.startswith("/") or ".." in parts:
            raise ValueError(f"{tar.name}: member {m.name!r} leaves the archive folder")
        if m.isfile() or m.isdir():
            members.append(m)
    return members


def unpack(name: str, work_dir: Path = WORK_DIR) -> Path:
    """The unpacked vault folder for `name`, unpacked again only when the archive changed."""
    archive = archive_path(name)
    if not archive.is_file():
        raise FileNotFoundError(f"no archive {archive} (set LORE_BENCH_DATA to its data folder)")
    dest = work_dir / "vaults" / name
    manifest = work_dir / "vaults" / f"{name}.manifest.json"
    stat = archive.stat()
    want = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "version": UNPACK_VERSION}
    if dest.is_dir() and manifest.is_file():
        have = json.loads(manifest.read_text(encoding="utf-8"))
        if {k: have.get(k) for k in want} == want:
            return dest / have["root"]
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        members = _safe_members(tar)
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4: the stdlib check as well
            tar.extractall(dest, members=members, filter="data")
        else:
            tar.extractall(dest, members=members)  # members are checked above
    tops = {PurePosixPath(m.name).parts[0] for m in members if m.name not in ("", ".")}
    root = next(iter(tops)) if len(tops) == 1 and (dest / next(iter(tops))).is_dir() else "."
    manifest.write_text(json.dumps({**want, "root": root}), encoding="utf-8")
    return dest / root


def _is_note(rel: PurePosixPath) -> bool:
    return rel.suffix.lower() in NOTE_SUFFIXES and not any(p in SKIP_DIRS for p in rel.parts[:-1])


def archive_note_paths(name: str) -> set[str]:
    """The note paths (vault-relative) an archive holds, read from its listing alone."""
    with tarfile.open(archive_path(name)) as tar:
        names = [PurePosixPath(m.name) for m in tar.getmembers() if m.isfile()]
    tops = {n.parts[0] for n in names if len(n.parts) > 1}
    strip = 1 if len(tops) == 1 and all(len(n.parts) > 1 for n in names) else 0
    rels = [PurePosixPath(*n.parts[strip:]) for n in names]
    return {str(r) for r in rels if _is_note(r)}


def scan_notes(root: Path) -> list[Doc]:
    """Every note of the vault as a Doc: id = vault-relative POSIX path, title = file stem,
    text = the whole file (front matter, title, aliases and tags included), sorted by id."""
    docs = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not _is_note(PurePosixPath(rel.as_posix())) or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        docs.append(Doc(id=rel.as_posix(), title=path.stem, text=text))
    return docs


def main() -> int:
    """Check every query file; check relevant paths too where the archive is at hand."""
    for name in VAULTS:
        queries = load_queries(query_file(name))
        kinds = {k: sum(q.kind == k for q in queries) for k in KINDS}
        line = f"{name}: {len(queries)} queries " + str({k: n for k, n in kinds.items() if n})
        if archive_path(name).is_file():
            paths = archive_note_paths(name)
            missing = missing_relevant(queries, paths)
            if missing:
                print(f"{name}: relevant paths that are not notes:", *missing, sep="\n  ")
                return 1
            line += f", every relevant path is one of its {len(paths)} notes"
        else:
            line += " (archive absent: relevant paths not checked)"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
