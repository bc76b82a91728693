"""Run metadata and Markdown/JSON output shared by the retrieval and scale benchmarks."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.datasets import REPO_ROOT

RESULTS_DIR = REPO_ROOT / "bench" / "results"


def nproc() -> int:
    # What `nproc` prints: CPUs this process may run on, not the host's total.
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no sched_getaffinity
        return os.cpu_count() or 1


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_revision() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() or "no commits yet"


def command_line(module: str) -> str:
    """The command as typed from the repo root, so it can be pasted to re-run. A path of
    this machine outside the checkout (another checkout's `lore`, say) is shown by its last
    parts only: results are committed, and no machine's paths go into the repo."""
    return shlex.join([_shown(sys.executable), "-m", module, *map(_shown, sys.argv[1:])])


def _shown(arg: str) -> str:
    path = Path(arg)
    if not path.is_absolute():
        return arg
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(Path("<elsewhere>", *path.parts[-3:]))


def run_info(module: str) -> dict[str, Any]:
    return {
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": command_line(module),
        "nproc": nproc(),
        "cpu": cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "git": git_revision(),
    }


def info_lines(info: dict[str, Any]) -> list[str]:
    return [
        f"- date: {info['date']}",
        f"- machine: nproc={info['nproc']}, {info['cpu']}, {info['platform']}, "
        f"Python {info['python']}",
        f"- repo: {info['git']}",
        f"- command (from the repo root): `{info['command']}`",
    ]


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _repo_relative(text: str) -> str:
    """Results are committed: no path of this machine in them, only repo-relative ones."""
    root = str(RESULTS_DIR.parents[1])
    return text.replace(root + "/", "").replace(root, ".")


def write_outputs(stem: str, markdown: str, data: dict[str, Any]) -> tuple[Path, Path]:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    md_path, json_path = RESULTS_DIR / f"{stem}.md", RESULTS_DIR / f"{stem}.json"
    md_path.write_text(_repo_relative(markdown), encoding="utf-8")
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    json_path.write_text(_repo_relative(text), encoding="utf-8")
    return md_path, json_path
