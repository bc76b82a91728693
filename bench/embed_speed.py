"""Time to meaning search (issue 18): what each embedding option costs and what it earns.

    .venv/bin/python -m bench.embed_speed kinds            # text kinds of `local`, cached vectors
    .venv/bin/python -m bench.embed_speed devsets [--words-from DB] [--sets a,b]
    .venv/bin/python -m bench.embed_speed variants         # local-fast's weighting choices
    .venv/bin/python -m bench.embed_speed vault --vault DIR --label NAME [--provider local-fast]
    .venv/bin/python -m bench.embed_speed render           # bench/results/embed_speed.md

Every part stores its JSON under bench/.work/embed_speed/, so parts run apart (the long
ones in the background) and `render` puts them side by side with bench.embed_throughput.

- kinds: on the sets bench.semantic embedded with the local model (its vector cache), MRR@10
  of mode3 when the vec/tag channels see only some text kinds (summary, passages, tag text),
  next to the tokens each kind costs the model. Done on copies of the index whose
  note_texts rows of the dropped kind are deleted, so the same vectors are ranked.
- devsets: local-fast indexed and embedded from scratch on each set; mode3 vs mode4.
- variants: local-fast's SIF constant, centring and query side, on squadshifts_new_wiki.
- vault: sync, then `vault.embed` with the provider, timed, with the load average, the ETA a
  progress bar would show at 10% and 50% of each stage and the real end; plus the tokens the
  full model would have to read for the same texts (its wall time follows from the tokens/s
  bench.embed_throughput measured).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import semantic
from bench.datasets import REPO_ROOT
from bench.lore_system import import_lore

WORK = REPO_ROOT / "bench" / ".work" / "embed_speed"
DEV_SETS = [  # the English set first: its words are the fewest
    "squadshifts_new_wiki",
    "longnotes_en@squadshifts_new_wiki",
    "cmrc2018_trial",
    "longnotes_zh@cmrc2018_trial",
]
SUBSETS = [
    "cmrc2018_trial-1k",
    "squadshifts_new_wiki-24a",
    "longnotes_zh@cmrc2018_trial-1k",
    "longnotes_en@squadshifts_new_wiki-24a",
]
KIND_VARIANTS = {  # name -> note_texts kinds removed
    "all kinds (today)": (),
    "no tag text": ("tags",),
    "passages + tags, no separate summary": ("summary",),
    "summary + tags, no passages": ("passage",),
    "passages only": ("summary", "tags"),
}
ONLY = [semantic.MODE4, semantic.MODE3, "vec alone"]


def _save(name: str, data: Any) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / f"{name}.json").write_text(json.dumps(data, indent=2, ensure_ascii=False))


def _mrr(table: dict[str, Any]) -> dict[str, float]:
    return {name: round(m["MRR@10"], 4) for name, m in table.items()}


class EtaLog:
    """A progress callback that records, per stage, the ETA a bar shows (elapsed / done x
    remaining, lore.present.human.eta_seconds) when 10% and 50% are first passed, and the
    stage's real end."""

    def __init__(self) -> None:
        self.stages: list[dict[str, Any]] = []
        self._stage: dict[str, Any] | None = None
        self._last = time.monotonic()

    def __call__(self, done: int, total: int, path: str) -> None:
        from lore.present.human import eta_seconds

        now = time.monotonic()
        label = "vocabulary" if path == "vocabulary" else "texts"
        if self._stage is None or self._stage["stage"] != label:
            # As ProgressBar counts: a stage announced with 0 done starts now, else at the
            # last report.
            start = now if done == 0 else self._last
            self._stage = {"stage": label, "total": total, "start": start, "samples": []}
            self.stages.append(self._stage)
        self._last = now
        stage = self._stage
        elapsed = now - stage["start"]
        stage["samples"].append((round(elapsed, 2), done))
        for mark in (0.1, 0.5):
            key = f"predicted_at_{int(mark * 100)}"
            if key not in stage and done >= mark * total:
                stage[key] = elapsed + eta_seconds(elapsed, done, total)
        stage["seconds"] = elapsed

    def report(self) -> list[dict[str, Any]]:
        out = []
        for stage in self.stages:
            row = {k: v for k, v in stage.items() if k not in ("start", "samples")}
            samples = stage["samples"]
            row["samples"] = samples[:: max(1, len(samples) // 100)] + samples[-1:]
            for key in ("predicted_at_10", "predicted_at_50"):
                if key in row and row["seconds"] > 0:
                    row[key.replace("predicted", "error")] = row[key] / row["seconds"] - 1
            out.append(row)
        return out


def _provider(name: str) -> Any:
    from lore.providers.registry import EMBEDDERS
    from lore.providers.settings import ProviderSettings

    return EMBEDDERS[name](ProviderSettings(embed_provider=name))


def kinds(lore: Any, sets: list[str] | None = None) -> dict[str, Any]:
    """MRR@10 per text-kind variant on the cached local-model indexes, and each kind's cost."""
    from lore.index.semantic import load_sources, texts_of
    from lore.providers.local import LocalE5

    counter = LocalE5(threads=1)
    saved = WORK / "kinds.json"
    out: dict[str, Any] = json.loads(saved.read_text()) if sets and saved.is_file() else {}
    for name in sets or SUBSETS:
        ds = semantic.load_set(name)
        vault = semantic.prepare_vault(ds)
        source_db = vault / ".lore" / "index.sqlite"
        if not source_db.is_file():
            print(f"   {name}: no cached index, run bench.semantic --sets {name} first")
            continue
        row: dict[str, Any] = {"variants": {}, "tokens": {}}
        with lore.open(vault) as v:
            ids = [int(r[0]) for r in v.store.query("SELECT id FROM notes")]
            seen: set[tuple[str, str]] = set()
            for source in load_sources(v.store, ids).values():
                for text in texts_of(source):
                    if (text.hash, text.space) in seen:
                        continue  # embedded once (the summary of a one-passage note)
                    seen.add((text.hash, text.space))
                    row["tokens"][text.kind] = row["tokens"].get(text.kind, 0) + (
                        counter.token_count(text.text)
                    )
        with tempfile.TemporaryDirectory() as tmp:
            for variant, dropped in KIND_VARIANTS.items():
                db = Path(tmp) / "index.sqlite"
                shutil.copy(source_db, db)
                with lore.open(vault, db=db) as v, v.store.transaction():
                    for kind in dropped:
                        v.store.db.execute("DELETE FROM note_texts WHERE kind = ?", (kind,))
                table = semantic.ablation(lore, ds, vault, None, db=db, only=ONLY)
                row["variants"][variant] = _mrr(table)
                print(f"   {name} {variant}: {row['variants'][variant]}", file=sys.stderr)
                db.unlink()
        out[name] = row
        _save("kinds", out)
    return out


def devsets(
    lore: Any, provider_name: str, words_from: Path | None = None, sets: list[str] | None = None
) -> dict[str, Any]:
    """`provider_name` indexed from scratch on each dev set: MRR@10 mode3 vs mode4. The word
    table of an earlier set is copied in first (it is a pure function of model and word),
    so only new words cost time; wall times are measured on the vaults, not here."""
    saved = WORK / f"devsets-{provider_name}.json"
    out: dict[str, Any] = json.loads(saved.read_text()) if sets and saved.is_file() else {}
    table_from = words_from
    for name in sets or DEV_SETS:
        ds = semantic.load_set(name)
        vault = semantic.prepare_vault(ds)
        db = WORK / provider_name / f"{name.replace('@', '_at_')}.sqlite"
        db.parent.mkdir(parents=True, exist_ok=True)
        provider = _provider(provider_name)
        started = time.perf_counter()
        with lore.open(vault, db=db) as v:
            v.sync()
            if table_from is not None and table_from != db:
                _copy_words(v.store, table_from)
        with lore.open(vault, db=db, embed_provider="local") as v:
            v.capabilities.use(embedder=provider)
            report = v.embed()
        seconds = time.perf_counter() - started
        table = semantic.ablation(lore, ds, vault, None, embedder=provider, db=db, only=ONLY)
        out[name] = {
            "mrr": _mrr(table),
            "texts": report.embedded,
            "words_embedded": getattr(provider, "words_embedded", None),
            "seconds": seconds,
        }
        print(f"   {name}: {out[name]}", file=sys.stderr)
        table_from = db
        _save(f"devsets-{provider_name}", out)
    return out


VARIANTS = {  # name -> (SIF a, subtract the empty text's vector, queries through the full model)
    "a=1e-5, centred (local-fast)": (1e-5, True, False),
    "a=1e-5, not centred": (1e-5, False, False),
    "a=1e-4, centred": (1e-4, True, False),
    "a=1e-6, centred": (1e-6, True, False),
    "a=1e-5, centred, queries by the full model": (1e-5, True, True),
}


def variants(lore: Any, set_name: str = "squadshifts_new_wiki") -> dict[str, Any]:
    """local-fast's weighting choices on one set, re-using the word table devsets stored."""
    from lore.providers.local import LocalE5
    from lore.providers.static import StaticE5

    class QueriesByModel(StaticE5):
        def embed(self, texts: list[str], kind: Any) -> Any:
            if kind == "query":
                return self.model.embed(texts, "query")
            return super().embed(texts, kind)

    ds = semantic.load_set(set_name)
    vault = semantic.prepare_vault(ds)
    source = WORK / "local-fast" / f"{set_name}.sqlite"
    out: dict[str, Any] = {}
    for name, (a, centred, by_model) in VARIANTS.items():
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "index.sqlite"
            shutil.copy(source, db)
            kind = QueriesByModel if by_model else StaticE5
            provider = kind(LocalE5(), sif_a=a, center=centred)
            with lore.open(vault, db=db, embed_provider="local") as v:
                v.capabilities.use(embedder=provider)
                v.embed(rebuild=True)
            table = semantic.ablation(lore, ds, vault, None, embedder=provider, db=db, only=ONLY)
        out[name] = _mrr(table)
        print(f"   {name}: {out[name]}", file=sys.stderr)
        _save("variants", {"set": set_name, "variants": out})
    return out


def _copy_words(store: Any, other: Path) -> None:
    from lore.store.vocab import TokenVectors

    TokenVectors(store, "").copy_from(other)


def vault_run(lore: Any, vault: Path, label: str, provider_name: str) -> dict[str, Any]:
    """Sync and embed `vault` from scratch with `provider_name`; timings, ETA accuracy, and
    the tokens the full model would read for the same texts."""
    from lore.index.semantic import load_sources, texts_of
    from lore.providers.local import LocalE5

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "index.sqlite"
        out: dict[str, Any] = {"vault": label, "provider": provider_name, "load_start": _load()}
        cpu_start = _cpu()
        started = time.perf_counter()
        with lore.open(vault, db=db) as v:
            v.sync()
            out["notes"] = v.status().notes
        out["sync_s"] = time.perf_counter() - started
        provider = _provider(provider_name)
        eta = EtaLog()
        t = time.perf_counter()
        with lore.open(vault, db=db, embed_provider="local") as v:
            v.capabilities.use(embedder=provider)
            report = v.embed(progress=eta)
            out["embed_s"] = time.perf_counter() - t
            provider.close()  # its workers' CPU time counts once they have exited
            out["cpu_s"] = _cpu() - cpu_start  # sync + embed: this process and its workers
            out["wall_to_mode3_s"] = time.perf_counter() - started
            out["mode"] = v.mode
            out["texts"] = report.embedded
            out["words_embedded"] = getattr(provider, "words_embedded", None)
            ids = [int(r[0]) for r in v.store.query("SELECT id FROM notes")]
            counter = LocalE5(threads=1)
            tokens: dict[str, int] = {}
            seen: set[tuple[str, str]] = set()
            for start in range(0, len(ids), 500):
                for source in load_sources(v.store, ids[start : start + 500]).values():
                    for text in texts_of(source):
                        if (text.hash, text.space) not in seen:
                            seen.add((text.hash, text.space))
                            n = counter.token_count(text.text)
                            tokens[text.kind] = tokens.get(text.kind, 0) + n
        out["e5_tokens"] = tokens
        out["texts_per_s"] = report.embedded / max(out["embed_s"], 1e-9)
        out["eta"] = eta.report()
        out["load_end"] = _load()
    _save(f"vault-{label}-{provider_name}", out)
    return out


def _cpu() -> float:
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.embed_speed", description=__doc__)
    p.add_argument("part", choices=["kinds", "devsets", "variants", "vault", "render"])
    p.add_argument("--vault", type=Path)
    p.add_argument("--label")
    p.add_argument("--provider", default="local-fast")
    p.add_argument("--words-from", type=Path, help="devsets: an index whose word table to reuse")
    p.add_argument(
        "--sets", type=lambda v: v.split(","), help="devsets/kinds: only these (others are kept)"
    )
    args = p.parse_args(argv)
    lore, note = import_lore()
    if lore is None:
        raise SystemExit(f"lore is not importable: {note}")
    if args.part == "kinds":
        result: Any = kinds(lore, args.sets)
    elif args.part == "devsets":
        result = devsets(lore, args.provider, args.words_from, args.sets)
    elif args.part == "variants":
        result = variants(lore)
    elif args.part == "vault":
        if args.vault is None or not args.label:
            raise SystemExit("vault needs --vault DIR and --label NAME")
        result = vault_run(lore, args.vault, args.label, args.provider)
    else:
        from bench.embed_report import render

        result = render()
    print(json.dumps(result, indent=2, ensure_ascii=False)[:4000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
