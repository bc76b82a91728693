"""bench/results/embed_speed.md from the parts bench.embed_speed and bench.embed_throughput
stored under bench/.work/embed_speed/ (each part records its own command and load)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.report import fmt, info_lines, md_table, run_info, write_outputs

WORK = Path(__file__).resolve().parent / ".work" / "embed_speed"
RESULTS = Path(__file__).resolve().parent / "results"
TARGET_S = 15 * 60
MODE4, MODE3 = "mode4 weighted (default)", "mode3 weighted (default)"
KEEP = 0.8  # of today's mode3 gain over mode4, on every dev set


def _read(name: str) -> Any:
    path = WORK / f"{name}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def _today() -> dict[str, tuple[float, float]]:
    """mode4 and mode3 MRR@10 of the local model per dev set (bench/results/semantic.json)."""
    data = json.loads((RESULTS / "semantic.json").read_text())
    out = {}
    for s in data["sets"]:
        a = s["ablation"]
        out[s["set"]] = (
            a["mode4 weighted (default)"]["MRR@10"],
            a["mode3 weighted (default)"]["MRR@10"],
        )
    return out


def quality_rows(devsets: dict[str, Any]) -> list[list[str]]:
    today = _today()
    rows = []
    for name, entry in devsets.items():
        m4, m3 = today[name]
        fast = entry["mrr"]["mode3 weighted (default)"]
        fast_m4 = entry["mrr"]["mode4 weighted (default)"]
        kept = (fast - fast_m4) / (m3 - m4) if m3 > m4 else float("nan")
        rows.append(
            [
                name,
                fmt(m4),
                fmt(m3),
                f"{m3 - m4:+.3f}",
                fmt(fast),
                f"{fast - fast_m4:+.3f}",
                f"{kept:.0%}",
                "yes" if kept >= KEEP else "NO",
                fmt(entry["mrr"]["vec alone"]),
            ]
        )
    return rows


def render() -> dict[str, Any]:
    info = run_info("bench.embed_speed")
    lines = ["# Time to meaning search (issue 18)", "", *info_lines(info), ""]
    data: dict[str, Any] = {"info": info}
    for name in sorted(p.stem for p in WORK.glob("*.json")):
        data[name] = _read(name)
    lines += ["See the notes at the end for what each table means and how it was run.", ""]
    devsets = data.get("devsets-local-fast")
    if devsets:
        lines += ["## Quality: local-fast vs local (MRR@10, mode3 vs mode4)", ""]
        header = [
            "set",
            "mode4",
            "local mode3",
            "local gain",
            "local-fast mode3",
            "local-fast gain",
            "gain kept",
            f"≥ {KEEP:.0%}?",
            "local-fast vec alone",
        ]
        lines += md_table(header, quality_rows(devsets)) + [""]
    vaults = [v for k, v in data.items() if k.startswith("vault-") and v]
    if vaults:
        lines += ["## Wall time to mode 3", ""]
        rows = []
        for v in vaults:
            etas = "; ".join(
                f"{s['stage']}: at 10% {s.get('error_at_10', float('nan')):+.0%},"
                f" at 50% {s.get('error_at_50', float('nan')):+.0%} ({s['seconds']:.0f} s)"
                for s in v["eta"]
            )
            rows.append(
                [
                    v["vault"],
                    v["provider"],
                    str(v["notes"]),
                    str(v["texts"]),
                    f"{v['sync_s']:.0f}",
                    f"{v['embed_s']:.0f}",
                    f"{v['wall_to_mode3_s']:.0f}",
                    "yes" if v["wall_to_mode3_s"] <= TARGET_S else "NO",
                    f"{v['texts_per_s']:.1f}",
                    etas,
                    "–".join(
                        f"{x:.1f}" for x in v.get("load_during", [v["load_start"], v["load_end"]])
                    ),
                ]
            )
        header = [
            "vault",
            "provider",
            "notes",
            "texts",
            "sync s",
            "embed s",
            "to mode3 s",
            "≤ 15 min?",
            "texts/s",
            "ETA error (stage: predicted/real − 1)",
            "load",
        ]
        lines += md_table(header, rows) + [""]
    lines += _partial([v for k, v in data.items() if k.startswith("partial-") and v])
    lines += _estimates(vaults, data.get("throughput"))
    lines += _throughput(data.get("throughput"))
    lines += _kinds(data.get("kinds"))
    lines += _variants(data.get("variants"))
    lines += [f"- {note}" for note in NOTES] + [""]
    write_outputs("embed_speed", "\n".join(lines) + "\n", data)
    return {"written": "bench/results/embed_speed.md"}


def _partial(runs: list[dict[str, Any]]) -> list[str]:
    """Runs stopped before their end: how far they got."""
    lines = []
    for run in runs:
        rate = run["words_embedded"] / max(run["stopped_at_s"], 1)
        loads = [s[3] for s in run["samples"]]
        lines.append(
            f"- {run['vault']} with {run['provider']} ({run['notes']} notes): stopped after"
            f" {run['stopped_at_s'] / 60:.0f} min, in the vocabulary stage, with"
            f" {run['words_embedded']:,} of about {run['words_in_vault_estimate']:,} words"
            f" embedded ({rate:.1f} words/s overall, load {min(loads):.0f}–{max(loads):.0f});"
            f" {run['note']}."
        )
    return ["## Runs that did not finish", "", *lines, ""] if lines else []


def _estimates(vaults: list[dict[str, Any]], throughput: dict[str, Any] | None) -> list[str]:
    """The full model's wall time for the same texts, from its measured tokens/s."""
    if not vaults or not throughput:
        return []
    rates = throughput["median_tokens_per_s"]
    rows = []
    for v in vaults:
        tokens = v["e5_tokens"]
        total = sum(tokens.values())
        no_tags = total - tokens.get("tags", 0)
        for option in ("omp", "workers"):
            if option in rates:
                rows.append(
                    [
                        v["vault"],
                        f"local ({option})",
                        f"{total:,}",
                        f"{total / rates[option] / 60:.0f}",
                        f"{no_tags / rates[option] / 60:.0f}",
                    ]
                )
    header = [
        "vault",
        "option",
        "e5 tokens of its texts",
        "estimated minutes (all kinds)",
        "estimated minutes (no tag text)",
    ]
    return [
        "## The full model on the same vaults (estimated from its measured tokens/s)",
        "",
        *md_table(header, rows),
        "",
    ]


def _throughput(data: dict[str, Any] | None) -> list[str]:
    if not data:
        return []
    tps, toks = data["median_texts_per_s"], data["median_tokens_per_s"]
    base = toks.get("omp") or 1.0
    rows = [[o, f"{tps[o]:.2f}", f"{toks[o]:.0f}", f"{toks[o] / base:.2f}×"] for o in tps]
    loads = [r["load_before"] for r in data["runs"]] + [r["load_after"] for r in data["runs"]]
    lines = [
        "## Model throughput per option (medians of the rounds, same texts)",
        "",
        *md_table(["option", "texts/s", "tokens/s", "vs omp"], rows),
        "",
        f"Load average during these runs: {min(loads):.1f}–{max(loads):.1f} on 2 cores.",
        "",
    ]
    http = data.get("http_median_texts_per_s")
    if http:
        one = http.get("1") or 1.0
        lines += [
            "### OpenAI-compatible server on 127.0.0.1, 50 ms a request, 16 texts a request",
            "",
            *md_table(
                ["requests in flight", "texts/s", "vs 1"],
                [[k, f"{v:.0f}", f"{v / one:.2f}×"] for k, v in http.items()],
            ),
            "",
        ]
    return lines


def _kinds(data: dict[str, Any] | None) -> list[str]:
    if not data:
        return []
    lines = ["## What each text kind earns (local model, cached vectors; MRR@10)", ""]
    for name, entry in data.items():
        tokens = entry["tokens"]
        total = sum(tokens.values()) or 1
        share = ", ".join(f"{k} {v:,} ({v / total:.0%})" for k, v in sorted(tokens.items()))
        lines += [f"### {name}", "", f"e5 tokens per kind: {share}", ""]
        rows = [
            [
                variant,
                fmt(m[MODE4]),
                fmt(m[MODE3]),
                f"{m[MODE3] - m[MODE4]:+.3f}",
                fmt(m["vec alone"]),
            ]
            for variant, m in entry["variants"].items()
        ]
        lines += md_table(["texts embedded", "mode4", "mode3", "gain", "vec alone"], rows)
        lines += [""]
    return lines


def _variants(data: dict[str, Any] | None) -> list[str]:
    if not data:
        return []
    rows = [
        [name, fmt(m[MODE4]), fmt(m[MODE3]), f"{m[MODE3] - m[MODE4]:+.3f}", fmt(m["vec alone"])]
        for name, m in data["variants"].items()
    ]
    return [
        f"## local-fast's weighting, on {data['set']} (MRR@10)",
        "",
        *md_table(["variant", "mode4", "mode3", "gain", "vec alone"], rows),
        "",
        *([f"{data['note']}", ""] if data.get("note") else []),
    ]


NOTES = [
    "Commands, from the repo root, as run for this file (each part writes "
    "bench/.work/embed_speed/<part>.json; `.venv/bin/python -m bench.embed_speed render` "
    "writes this file): `.venv/bin/python -m bench.embed_throughput --rounds 2 --texts 24 "
    "--options omp,workers,sparse,words` (rounds 0-1) and `... --rounds 4 --texts 24 "
    "--options omp,workers,words` (rounds 2-3, stopped after four runs for lack of time); "
    "`.venv/bin/python -m bench.semantic --sets cmrc2018_trial-1k,squadshifts_new_wiki-24a,"
    "longnotes_zh@cmrc2018_trial-1k,longnotes_en@squadshifts_new_wiki-24a --embed-only` (the "
    "local model's vectors; stopped during the long English subset) then "
    "`.venv/bin/python -m bench.embed_speed kinds --sets cmrc2018_trial-1k,"
    "squadshifts_new_wiki-24a`; `.venv/bin/python -m bench.embed_speed devsets --words-from "
    "<an index holding squadshifts_new_wiki's words>` (first two sets) and `... devsets "
    "--words-from <the 10k run's index> --sets cmrc2018_trial,longnotes_zh@cmrc2018_trial`; "
    "`.venv/bin/python -m bench.embed_speed vault --vault bench/.work/vault-10000-seed0 "
    "--label generated-10k` (bench.scale's generator, 10,000 notes, seed 0) and `... vault "
    "--vault <mynote unpacked> --label mynote`.",
    "Today's figures (local, all text kinds) are bench/results/semantic.md's, on the full "
    "sets; local-fast's are measured here on the same full sets, indexed from scratch (word "
    "vectors copied from an earlier index: they are a pure function of model and word, so "
    "this changes the time, which is measured on the vaults, not the vectors).",
    "Text kinds: on sets of one-passage notes a note's summary is its passage (one vector), so "
    "dropping either kind alone changes nothing there; the long-note subsets, where the "
    "separate summary costs its own tokens, were not reached in this session.",
    "The machine was shared with other engineers' test runs and benchmarks and with this "
    "issue's own background runs (load average 7-13 on 2 cores for every timing here, "
    "recorded with each): wall times are what a user on such a machine waits, and throughput "
    "ratios come from runs interleaved round by round.",
    "ETA error: the ETA a progress bar shows (elapsed / done × remaining) when 10% and 50% "
    "of a stage are first passed, against the stage's real length. The 10k run's vocabulary "
    "stage clock included the work before it (tag derivation, collecting the words): that "
    "run predates the change that starts each stage's clock when the stage is announced.",
]
