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
    info = run_info("bench.embed_speed render")
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
                    f"{v['load_start']}–{v['load_end']}",
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
    write_outputs("embed_speed", "\n".join(lines) + "\n", data)
    return {"written": "bench/results/embed_speed.md"}
