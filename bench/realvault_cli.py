"""Cold start of the `lore search` command: one new process per run, as a user types it,
on the real vaults and on bench.scale's generated 10k-note vault.

Each run is a fresh `lore` process (the venv's console script) against an index built
beforehand, so the time is interpreter start + imports + opening the index + one search +
printing; the files are in the OS page cache (a cold *process*, not a cold disk) and the
bytecode of everything it imports is compiled beforehand, as an install does: every measured
process (this build's and the baseline's alike) reads and writes its bytecode under one
PYTHONPYCACHEPREFIX of the bench, and one unmeasured run of each command writes it. So an
environment with PYTHONDONTWRITEBYTECODE, or a baseline checkout never compiled, does not
compile modules in every run, and the bench writes nothing into either checkout. Wall time
is taken around the process (from fork to exit); its peak RSS comes from `os.wait4`, per run.

With a baseline (another `lore` script, e.g. a checkout of main with its own venv), each
measurement alternates the two processes run by run, so both see the same machine load.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from bench import realvault_data as data
from bench.lore_system import LoreVault

# Targets from issue 12, measured at 10k notes (reported, never asserted).
MAX_ZH_S = 0.3
MAX_EN_S = 0.2
MAX_RSS_MB = 120.0
KIB = 1024


def lore_exe() -> Path | None:
    """The `lore` script of the venv this bench runs in (never a `lore` found on PATH)."""
    exe = Path(sys.executable).with_name("lore")
    return exe if exe.is_file() else None


# Where every measured process keeps its bytecode (see the module's docstring).
PYCACHE_DIR = data.WORK_DIR / "pycache"


def _child_env() -> dict[str, str]:
    # Only the flags given pick the vault and the index: no LORE_* setting leaks in.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("LORE_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE_DIR)
    return env


# The measured process is forked by this small launcher, not by the bench: a child forked
# from a big parent starts with the parent's pages, and Linux keeps that peak in the child's
# ru_maxrss across exec. The launcher itself is a bare interpreter (`launcher_floor_mb()`).
LAUNCHER = """
import json, os, sys, time
devnull = os.open(os.devnull, os.O_WRONLY)
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(devnull, 1)
    try:
        os.execv(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "status": status, "maxrss": usage.ru_maxrss}))
"""


def run_once(cmd: list[str], timeout: float) -> tuple[float, float, int, str]:
    """(wall seconds, peak RSS MB, exit code, stderr tail) of one process; a process still
    running after `timeout` seconds is killed (and reported as exit code -9)."""
    launcher = [sys.executable, "-I", "-S", "-c", LAUNCHER, *cmd]
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            launcher, stdout=subprocess.PIPE, stderr=err, env=_child_env(), start_new_session=True
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return timeout, 0.0, -9, f"killed after {timeout:.0f}s"
        err.seek(0)
        tail = err.read().decode("utf-8", "replace").strip()[-300:]
    if proc.returncode != 0:
        return 0.0, 0.0, proc.returncode, tail or "the launcher failed"
    result = json.loads(out)
    rss_kib = result["maxrss"] / KIB if sys.platform == "darwin" else result["maxrss"]
    code = os.waitstatus_to_exitcode(result["status"])
    return result["seconds"], rss_kib / KIB, code, tail


def launcher_floor_mb() -> float:
    """Peak RSS reported for a process that does nothing (`true`): the launcher's share."""
    true = shutil.which("true") or "/bin/true"
    return run_once([true], timeout=30)[1]


def search_args(vault: Path, db: Path, query: str) -> list[str]:
    """`lore search QUERY` against an existing index."""
    return ["search", query, "--vault", str(vault), "--db", str(db), "--limit", "10"]


def time_commands(
    exes: list[Path], args: list[str], runs: int, timeout: float = 120
) -> list[dict[str, Any]]:
    """`runs` cold processes of each `exe args`, alternating between the exes run by run,
    after one unmeasured run of each (it writes the bytecode of what the command imports,
    as an install would have); for each exe its median, min, max and first wall time and
    its peak RSS."""
    times: list[list[float]] = [[] for _ in exes]
    rss: list[list[float]] = [[] for _ in exes]
    errors: list[str | None] = [None for _ in exes]
    for exe in exes:
        run_once([str(exe), *args], timeout)
    for _ in range(runs):
        for i, exe in enumerate(exes):
            if errors[i] is not None:
                continue
            seconds, rss_mb, code, tail = run_once([str(exe), *args], timeout)
            if code != 0:
                errors[i] = f"`lore {args[0]}` exited {code}: {tail}"
            times[i].append(seconds)
            rss[i].append(rss_mb)
    return [
        {"error": error} if error is not None else _summary(t, r, runs)
        for t, r, error in zip(times, rss, errors, strict=True)
    ]


def _summary(times: list[float], rss: list[float], runs: int) -> dict[str, Any]:
    return {
        "runs": runs,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "first_s": times[0],
        "max_rss_mb": max(rss),
        "median_rss_mb": statistics.median(rss),
    }


def verdict(lang: str, result: dict[str, Any]) -> dict[str, str]:
    """pass/FAIL of one measurement against the issue's targets (time by language, RSS)."""
    if "error" in result:
        return {"time": "error", "rss": "error"}
    limit = MAX_ZH_S if lang == "zh" else MAX_EN_S
    return {
        "time": "pass" if result["median_s"] <= limit else "FAIL",
        "rss": "pass" if result["max_rss_mb"] <= MAX_RSS_MB else "FAIL",
    }


# --- the cold-start runs of bench.realvault --------------------------------------------

GENERATED = "generated-10k"
GENERATED_NOTES = 10_000
# One Chinese and one English query per vault for the cold-start runs.
CLI_QUERIES = {
    "mynote": {"zh": "怎么在 linux 下看哪个进程占了端口", "en": "kernel module loader"},
    "obsidian-hub": {"zh": "中文手写字体", "en": "dataview group by"},
    GENERATED: {"zh": "北京大学的历史", "en": "history of the university"},
}


def generated_index(lore_mod: ModuleType, seed: int) -> tuple[Path, Path, dict[str, Any]]:
    """bench.scale's seeded 10k-note vault, with a fresh lore index beside it."""
    from bench import datasets, scale

    pool = scale.paragraph_pool(datasets.data_root())
    info = scale.ensure_vault(GENERATED_NOTES, seed, pool, fresh=False)
    lore = LoreVault(lore_mod, Path(info["vault"]), data.WORK_DIR / f"{GENERATED}.index.sqlite")
    lore.index()
    lore.close()
    return lore.vault_dir, lore.db, {"notes": info["notes"], **lore.build}


def cold_start(
    vaults: list[str],
    lore_mod: ModuleType,
    lore_by_vault: dict[str, LoreVault],
    runs: int,
    with_generated: bool,
    seed: int,
    baseline: Path | None = None,
    baseline_label: str = "baseline",
) -> dict[str, Any]:
    exe = lore_exe()
    if exe is None:
        return {"error": f"no `lore` script beside {sys.executable} (pip install -e . first)"}
    if baseline is not None and not baseline.is_file():
        return {"error": f"baseline {baseline} is not a `lore` script"}
    exes = [exe] if baseline is None else [exe, baseline]
    targets: list[tuple[str, Path, Path, dict[str, Any]]] = []
    for name in vaults:
        lore = lore_by_vault.get(name)
        if lore is None:  # lore was not among --systems: build its index for the CLI
            lore = LoreVault(lore_mod, data.unpack(name), data.WORK_DIR / f"{name}.index.sqlite")
            lore.index()
        lore.close()
        targets.append((name, lore.vault_dir, lore.db, {"notes": lore.build.get("indexed")}))
    rows: list[dict[str, Any]] = []
    if with_generated:
        print(f"== {GENERATED}: generating/indexing", file=sys.stderr)
        try:
            targets.append((GENERATED, *generated_index(lore_mod, seed)))
        except Exception:  # e.g. no data sets to generate from: say so in the table
            error = traceback.format_exc(limit=4).strip().splitlines()[-1]
            rows += [
                {"vault": GENERATED, "lang": lang, "query": query, "error": error}
                for lang, query in CLI_QUERIES[GENERATED].items()
            ]
    shutil.rmtree(PYCACHE_DIR, ignore_errors=True)  # compiled afresh by both builds alike
    # `lore --help`: the start-up floor, measured next to the searches (same machine load).
    help_run, *help_baseline = time_commands(exes, ["--help"], runs, timeout=60)
    floor = launcher_floor_mb()
    for name, vault, db, meta in targets:
        for lang, query in CLI_QUERIES[name].items():
            result, *base = time_commands(exes, search_args(vault, db, query), runs)
            row = {"vault": name, "lang": lang, "query": query, **meta, **result}
            row["verdict"] = verdict(lang, result)
            if base:
                row["baseline"] = base[0]
            rows.append(row)
            print(f"   cli {name} {lang}: {result} baseline {base}", file=sys.stderr)
    out = {"exe": exe.name, "runs": runs, "help": help_run, "launcher_mb": floor, "rows": rows}
    if baseline is not None:
        out["baseline"] = {"label": baseline_label, "help": help_baseline[0]}
    return out
