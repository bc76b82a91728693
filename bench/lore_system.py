"""lore behind the same System interface as the baselines, plus a guarded import, and
`LoreVault`: lore on a real vault folder with its index at an explicit path (bench.realvault).

lore is being written alongside this harness, so importing it may fail (not installed, half
written). `import_lore()` never raises: it returns the module or the reason it is unusable,
and the harness carries on with the baselines.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from bench.datasets import REPO_ROOT, Doc

SAFE_NAME_RE = re.compile(r"[^A-Za-z0-9._-]+")


def import_lore() -> tuple[ModuleType | None, str]:
    """(lore module, "") or (None, why not). Falls back to <repo>/src when lore is not
    installed into the venv yet, so the bench works on a fresh checkout too."""
    src = REPO_ROOT / "src"
    note = ""
    try:
        lore = importlib.import_module("lore")
    except ImportError:
        if not (src / "lore" / "__init__.py").is_file():
            return (
                None,
                "lore is not importable (not installed, and src/lore/__init__.py is missing)",
            )
        sys.path.insert(0, str(src))
        note = f" (not installed; imported from {src})"
        try:
            lore = importlib.import_module("lore")
        except Exception:  # any import failure is reported, not fatal
            return None, "import lore failed:\n" + traceback.format_exc(limit=3)
    except Exception:  # e.g. a SyntaxError in a module lore imports
        return None, "import lore failed:\n" + traceback.format_exc(limit=3)
    # lore exports names lazily, so fetching `open` is what imports lore.vault and its deps.
    try:
        open_ = getattr(lore, "open", None)
    except Exception:  # a half-written module: report it, keep the baselines running
        return None, "lore.open failed to import:\n" + traceback.format_exc(limit=3)
    # Without src/lore/__init__.py, src/lore would import as an empty namespace package.
    if not callable(open_):
        where = getattr(lore, "__file__", None) or list(getattr(lore, "__path__", []))
        return None, f"lore imported from {where} but has no lore.open() yet"
    return lore, note


def safe_filename(doc_id: str) -> str:
    """A portable file stem for a doc id. Ids that had to be altered get a short hash suffix,
    so two ids that sanitise to the same text cannot overwrite each other's note."""
    stem = SAFE_NAME_RE.sub("_", doc_id).strip("._") or "doc"
    if stem != doc_id:
        stem = f"{stem[:80]}-{hashlib.sha1(doc_id.encode()).hexdigest()[:8]}"
    return stem


def note_text(front_matter: dict[str, Any], body: str) -> str:
    # yaml.safe_dump quotes whatever needs it (ids that look like numbers or dates, titles with
    # colons), so the front matter round-trips to the same strings.
    fm = yaml.safe_dump(front_matter, allow_unicode=True, sort_keys=False, width=10_000)
    return f"---\n{fm}---\n\n{body.rstrip()}\n"


def write_vault(docs: Sequence[Doc], vault: Path) -> None:
    notes = vault / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        text = note_text({"id": doc.id, "title": doc.title}, doc.text)
        (notes / f"{safe_filename(doc.id)}.md").write_text(text, encoding="utf-8", newline="\n")


class LoreSystem:
    """Writes the set as a temp vault (untimed), then times lore.open() + sync() as `index`."""

    name = "lore"
    langs = frozenset({"zh", "en"})

    def __init__(self, lore: ModuleType) -> None:
        self._lore = lore
        self._tmp = tempfile.TemporaryDirectory(prefix="lore-bench-")
        self.vault_dir = Path(self._tmp.name) / "vault"
        self._vault: Any = None
        self.warnings: list[str] = []

    def prepare(self, docs: Sequence[Doc]) -> None:
        write_vault(docs, self.vault_dir)

    def index(self, docs: Sequence[Doc]) -> None:
        self._vault = self._lore.open(self.vault_dir, db=None)
        report = self._vault.sync()
        added = len(getattr(report, "added", []))
        if added != len(docs):
            skipped = getattr(report, "skipped", [])
            self.warnings.append(
                f"sync added {added} of {len(docs)} notes; skipped: {list(skipped)[:3]}"
            )

    def search(self, query: str, k: int) -> list[str]:
        hits = self._vault.search(query, limit=k)
        # Ids are mapped back through front matter. lore may return several hits of one note
        # (e.g. per section); only the note's first appearance counts, as for a ranked list
        # of documents. A hit without an id is kept as a sure miss so ranks stay honest.
        out: list[str] = []
        for hit in hits:
            doc_id = (hit.frontmatter or {}).get("id")
            out.append(str(doc_id) if doc_id is not None else f"<no id: {hit.path}>")
        return list(dict.fromkeys(out))

    def close(self) -> None:
        if self._vault is not None:
            self._vault.close()
            self._vault = None
        self._tmp.cleanup()


class LoreMode3System(LoreSystem):
    """lore in mode3: the local e5 model (`lore[local]`), vectors through the bench's shared
    on-disk vector cache (bench/.work/semantic/e5-cache.sqlite), so a set embedded once by
    `python -m bench.semantic` or an earlier run is not embedded again. Opt-in
    (`--systems lore-mode3`): embedding a full set takes 10+ minutes on 2 cores."""

    name = "lore-mode3"

    def index(self, docs: Sequence[Doc]) -> None:
        from bench.semantic import WORK, CachedEmbedder

        self._vault = self._lore.open(self.vault_dir, db=None, embed_provider="local")
        caps = self._vault.capabilities
        caps.use(embedder=CachedEmbedder(caps.embedder(), WORK / "e5-cache.sqlite"))
        self._vault.sync()
        if self._vault.mode != "mode3":
            self.warnings.append(f"ran in {self._vault.mode}: {self._vault.status().capabilities}")


def _remove_index(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


class LoreVault:
    """lore on one vault with its index at an explicit path outside the vault."""

    name = "lore"

    def __init__(self, lore: ModuleType, vault: Path, db: Path) -> None:
        self.lore, self.vault_dir, self.db = lore, vault, db
        self._vault: Any = None
        self.indexed: list[str] = []
        self.build: dict[str, Any] = {}

    def index(self) -> None:
        """A fresh full index: the old one is deleted first."""
        self.db.parent.mkdir(parents=True, exist_ok=True)
        _remove_index(self.db)
        start = time.perf_counter()
        self._vault = self.lore.open(self.vault_dir, db=self.db)
        report = self._vault.sync()
        self.build = {
            "index_s": time.perf_counter() - start,
            "indexed": len(report.added),
            "skipped": [f"{s.path}: {s.reason}" for s in report.skipped][:20],
            "warnings": len(report.warnings),
        }
        self.indexed = list(report.added)

    def search(self, query: str, k: int) -> list[str]:
        # A note may come back as several hits (sections): only its first appearance counts.
        return list(dict.fromkeys(hit.path for hit in self._vault.search(query, limit=k)))

    def explain(self, query: str, k: int) -> dict[str, Any]:
        """The plan and the top hits' evidence (`--explain`), for the failures section."""
        result = self._vault.search(query, limit=k, explain=True)
        plan: dict[str, Any] = {"matched": getattr(result, "matched", None)}
        if getattr(result, "reason", None):
            plan["reason"] = result.reason
        hits = []
        for hit in list(result)[:3]:
            ex = hit.explain.to_dict() if getattr(hit, "explain", None) else {}
            for key in ("query_terms", "dropped_terms", "fts_query"):
                plan.setdefault(key, ex.get(key))
            hits.append(
                {
                    "path": hit.path,
                    "score": round(float(hit.score), 4),
                    "matched_terms": ex.get("matched_terms"),
                    "fields": {f: round(v, 3) for f, v in (ex.get("fields") or {}).items()},
                }
            )
        return {**plan, "top": hits}

    @property
    def is_open(self) -> bool:
        return self._vault is not None

    def close(self) -> None:
        if self._vault is not None:
            self._vault.close()
            self._vault = None
