"""The interest map measured: do the clusters find the articles the paragraphs came from,
do cluster ids survive new notes, and how long does a build take at 10k notes.

    .venv/bin/python -m bench.interest [--set squadshifts_new_wiki] [--no-scale] [--no-write]

Quality: squadshifts_new_wiki (1,581 paragraphs of 48 Wikipedia articles), each paragraph
a note; NMI and ARI (bench/partition.py) of the clusters against the articles, for both
back ends with and without PCA, in mode3 (the local e5 model's vectors, as bench.semantic
stored them: nothing is embedded here) and lexical-only (TF-IDF). The index is copied from
bench/.work/semantic/<set>/ into bench/.work/interest/ before anything is written.
If the full set is not embedded yet, the 24-article subset is used and the results say so.

The notes' titles are the article names and the embedded texts start with the title, so
the mode3 and plain lexical rows see the label; a lexical run on a copy of the vault
without titles shows what the text alone gives.

Stability: 5% of the notes (seeded) are taken out, the map is built, they are put back and
the map is rebuilt; reported is the share of the other notes whose cluster id is unchanged.

Scale: one build at 10k notes per back end and source, each in its own process (time and
peak RSS), on bench.scale's generated vault and the index bench.semantic's 10k latency run
left (pseudo-random 384-d vectors: the timing is real, the clusters are not meaningful).
Writes bench/results/interest.md and interest.json.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.datasets import REPO_ROOT
from bench.interest_data import SEMANTIC, WORK, backup_index, plain_vault, truth, vector_vault
from bench.lore_system import import_lore as _import_lore
from bench.partition import ari, nmi
from bench.report import fmt, info_lines, md_table, run_info, write_outputs

SCALE_VAULT = REPO_ROOT / "bench" / ".work" / "vault-10000-seed0"
SCALE_INDEX = SEMANTIC / "scale-10000" / "index.sqlite"
TODAY = "2026-11-30"  # fixed, so reruns compare (these notes have no dates anyway)
BACKENDS = (
    ("kmeans++", True),
    ("kmeans++", False),
    ("hierarchical", True),
    ("hierarchical", False),
)


# -- measurements --------------------------------------------------------------------------


def clusters_of(interest: Any) -> dict[str, int]:
    return {m.path: c.id for c in interest.clusters for m in c.members}


def _open(lore: Any, vault: Path) -> Any:
    """The embedded vaults as bench.semantic made them (keyword tags on: an embedder was
    configured); the plain ones as in mode 4 (no keyword tags)."""
    embedded = (vault.parent / "embedded").is_file()
    return lore.open(vault, heuristic_tags="on" if embedded else "auto")


def quality(lore: Any, vault: Path, labels: dict[str, str], **settings: Any) -> dict[str, Any]:
    with _open(lore, vault) as v:
        v.sync()
        started = time.perf_counter()
        interest = v.build_clusters(today=_today(), **settings)
        seconds = time.perf_counter() - started
    got = clusters_of(interest)
    paths = sorted(got)
    truth_list = [labels[p] for p in paths]
    found = [got[p] for p in paths]
    return {
        "settings": settings,
        "lexical": interest.lexical,
        "source": interest.params["source"],
        "clusters": len(interest.clusters),
        "notes": interest.notes,
        "unclustered": len(interest.unclustered),
        "nmi": nmi(truth_list, found),
        "ari": ari(truth_list, found),
        "seconds": seconds,
        "clustering": interest.params.get("clustering", {}),
        "sizes": [c.size for c in interest.clusters],
    }


def stability(lore: Any, vault: Path, share: float = 0.05, **settings: Any) -> dict[str, Any]:
    notes = sorted((vault / "notes").glob("*.md"))
    held = sorted(random.Random(5).sample(notes, max(1, int(len(notes) * share))))
    aside = vault.parent / "held"
    aside.mkdir(exist_ok=True)
    with _open(lore, vault) as v:
        for path in held:
            path.rename(aside / path.name)
        v.sync()
        before = clusters_of(v.build_clusters(today=_today(), **settings))
        for path in held:
            (aside / path.name).rename(path)
        v.sync()
        after = clusters_of(v.build_clusters(today=_today(), **settings))
    common = sorted(before)
    kept = sum(1 for p in common if after.get(p) == before[p])
    return {
        "settings": settings,
        "added": len(held),
        "base": len(common),
        "kept_id": kept / len(common),
        "ari_before_after": ari([before[p] for p in common], [after[p] for p in common]),
    }


def import_lore() -> Any:
    lore, why = _import_lore()
    if lore is None:
        raise SystemExit(f"bench.interest: {why}")
    return lore


def _today() -> Any:
    import datetime as dt

    return dt.date.fromisoformat(TODAY)


# -- 10k notes, one process per build -------------------------------------------------------


def scale_one(spec: dict[str, Any]) -> dict[str, Any]:
    lore = import_lore()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with lore.open(SCALE_VAULT, db=spec["db"]) as v:
        started = time.perf_counter()
        interest = v.build_clusters(
            today=_today(), source=spec["source"], cluster_algo=spec["algo"], llm_labels="off"
        )
        seconds = time.perf_counter() - started
    return {
        **spec,
        "seconds": seconds,
        "notes": interest.notes,
        "clusters": len(interest.clusters),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_before_mb": rss_before / 1024,
        "clustering": interest.params.get("clustering", {}),
    }


def scale() -> dict[str, Any]:
    if not SCALE_VAULT.is_dir():
        return {"skipped": f"{SCALE_VAULT} missing: run bench.scale first"}
    db = WORK / "scale-10000.sqlite"
    sources = ["lexical"]
    if SCALE_INDEX.is_file():
        backup_index(SCALE_INDEX, db)
        sources.insert(0, "vectors")
    else:
        lore = import_lore()
        with lore.open(SCALE_VAULT, db=db) as v:
            v.sync()
    runs = []
    for source in sources:
        for algo in ("kmeans++", "hierarchical"):
            spec = {"db": str(db), "source": source, "algo": algo}
            out = subprocess.run(
                [sys.executable, "-m", "bench.interest", "--scale-one", json.dumps(spec)],
                capture_output=True,
                text=True,
                cwd=REPO_ROOT,
            )
            if out.returncode != 0:
                runs.append({**spec, "error": out.stderr.strip().splitlines()[-1:]})
                continue
            runs.append(json.loads(out.stdout))
            print(f"   10k {source} {algo}: {runs[-1]['seconds']:.1f} s", file=sys.stderr)
    return {"runs": runs, "vectors": "pseudo-random 384-d (bench.semantic HashEmbedder)"}


# -- report --------------------------------------------------------------------------------


def _row(label: str, q: dict[str, Any]) -> list[str]:
    c = q["clustering"]
    pca = f"{c['pca_dims']} dims ({c['pca_explained']:.2f})" if "pca_dims" in c else "off"
    return [
        label,
        q["settings"].get("cluster_algo", "kmeans++"),
        pca,
        str(q["clusters"]),
        fmt(q["nmi"]),
        fmt(q["ari"]),
        fmt(q["seconds"], 2),
    ]


def render(info: dict[str, Any], data: dict[str, Any]) -> str:
    lines = ["# Interest map benchmark", "", *info_lines(info), ""]
    if data.get("note"):
        lines += [f"**Note:** {data['note']}.", ""]
    lines += [
        f"## Quality: clusters vs. articles ({data['set']}, {data['notes']} paragraphs,"
        f" {data['articles']} articles)",
        "",
        "Seed 000's defaults (at most 16 clusters, min size 5, k-means++ n_init 10, merge"
        " 0.07 capped at 0.40 × the median centroid distance, average linkage cut at 0.20)."
        " NMI/ARI against the article of each paragraph; 1.0 = the articles exactly.",
        "",
    ]
    header = ["input", "back end", "PCA", "clusters", "NMI", "ARI", "build s"]
    rows = [_row(q["label"], q) for q in data["quality"]]
    lines += md_table(header, rows)
    lines += [
        "",
        "mode3 = the local e5 model's stored vectors (title + paragraph embedded);"
        " lexical = TF-IDF of title, tags and text; *no titles* = the same paragraphs without"
        " their article names. Rows marked `k=articles` allow as many clusters as there are"
        " articles.",
        "",
        "## Stability: 5% more notes",
        "",
        "Share of the other notes that keep their cluster id when 5% new notes arrive, and the"
        " ARI between the two maps on those notes (default `stability_tolerance` 0.01).",
        "",
    ]
    srows = [
        [
            s["label"],
            s["settings"].get("cluster_algo", "kmeans++"),
            str(s["settings"].get("max_clusters", 16)),
            f"{s['base']} + {s['added']}",
            fmt(s["kept_id"]),
            fmt(s["ari_before_after"]),
        ]
        for s in data["stability"]
    ]
    lines += md_table(["input", "back end", "max clusters", "notes", "kept id", "ARI"], srows)
    lines += [
        "",
        "## Reading the numbers",
        "",
        "- The default cap of 16 clusters is a third of the 48 articles, so at best three"
        " articles share a cluster: NMI and ARI are bounded well below 1 there, and which"
        " articles share one is a near tie. The k-means++ restarts land in near-equal"
        " partitions and 5% new notes change which has the lowest inertia: without the"
        " warm start from the stored map (docs/interest.md, Stable ids) only 0.45 (mode3)"
        " and 0.32 (lexical) of the notes kept their id at 16 clusters. The `k=articles`"
        " rows show what the same pipeline does when the cap fits the data.",
        "- The embedded texts start with the article title, and so do the lexical notes:"
        " both see the label. The *no titles* rows are the honest lexical figure; mode3"
        " has no such control without re-embedding.",
        "- Average linkage under a 16-cluster cap makes one large cluster and small ones"
        " (high NMI loss, ARI near 0); with the cap at the article count it is as good as"
        " k-means++.",
        "- PCA (0.95 of the variance) keeps about two thirds of the dimensions (e5: 253 of"
        " 384) and is no better than clustering the vectors as they are here; with the e5"
        " vectors and k-means++ it is worse (see the rows).",
    ]
    lines += ["", "## Build time at 10,000 notes", ""]
    sc = data.get("scale", {})
    if "skipped" in sc:
        lines.append(sc["skipped"])
    else:
        lines.append(
            f"Vectors: {sc['vectors']}. One process per build; RSS before is that process"
            " with lore imported, peak its high-water mark after the build. The machine"
            " is shared (2 cores): build times vary by up to 2-3x between runs."
        )
        lines.append("")
        rows = [
            [
                r["source"],
                r["algo"],
                "error: " + " ".join(r["error"]) if "error" in r else f"{r['seconds']:.1f}",
                "" if "error" in r else f"{r['rss_before_mb']:.0f} → {r['peak_rss_mb']:.0f}",
                "" if "error" in r else str(r.get("clustering", {}).get("pca_dims", "-")),
            ]
            for r in sc["runs"]
        ]
        lines += md_table(
            ["source", "back end", "build s", "RSS MB before → peak", "PCA dims"], rows
        )
    lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.interest", description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="squadshifts_new_wiki")
    parser.add_argument("--no-scale", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--scale-one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.scale_one:
        print(json.dumps(scale_one(json.loads(args.scale_one))))
        return 0
    lore = import_lore()
    info = run_info("bench.interest")
    name, vec_vault, note = vector_vault(args.set)
    print(f"== {name}", file=sys.stderr)
    labels = truth(vec_vault, name)
    articles = len(set(labels.values()))
    text_vault = plain_vault(name, titles=True)
    bare_vault = plain_vault(name, titles=False)
    bare_labels = truth(bare_vault, name)
    text_labels = truth(text_vault, name)
    runs: list[dict[str, Any]] = []
    inputs = (
        ("mode3", vec_vault, labels, "vectors"),
        ("lexical", text_vault, text_labels, "lexical"),
        ("lexical, no titles", bare_vault, bare_labels, "lexical"),
    )
    for label, vault, truth_map, source in inputs:
        for algo, pca in BACKENDS:
            q = quality(lore, vault, truth_map, source=source, cluster_algo=algo, use_pca=pca)
            runs.append({"label": label, **q})
            print(f"   {label} {algo} pca={pca}: NMI {q['nmi']:.3f}", file=sys.stderr)
        for algo in ("kmeans++", "hierarchical"):
            q = quality(
                lore, vault, truth_map, source=source, cluster_algo=algo, max_clusters=articles
            )
            runs.append({"label": f"{label}, k=articles", **q})
    stab = []
    for label, vault, _truth, source in inputs[:2]:
        for algo in ("kmeans++", "hierarchical"):
            for most in (16, articles):
                s = stability(lore, vault, source=source, cluster_algo=algo, max_clusters=most)
                stab.append({"label": label, **s})
                print(f"   stability {label} {algo} k<={most}: {s['kept_id']:.3f}", file=sys.stderr)
    data = {
        "set": name,
        "note": note,
        "notes": len(labels),
        "articles": articles,
        "quality": runs,
        "stability": stab,
        "scale": {"skipped": "--no-scale"} if args.no_scale else scale(),
    }
    out = {"run": info, **data}
    markdown = render(info, data)
    if args.no_write:
        print(markdown)
    else:
        md, js = write_outputs("interest", markdown, out)
        print(f"wrote {md} and {js}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
