"""Reliability benchmark: crashes, concurrency, hostile input and scale, in figures.

    .venv/bin/python -m bench.reliability [--notes 2000] [--kills 24] [--fuzz 2000]
                                          [--readers 4] [--seconds 8] [--stranger 10]
                                          [--quick]

- kills: `lore index` / `lore rebuild` / a first sync killed with SIGKILL (at a random
  step of the write transaction, or after a random delay), `lore embed` killed mid-way,
  `lore remember` killed at a random moment; each checked by the harness of
  tests/reliability (old or new state, doctor agrees, the next run loses nothing);
- fuzz: the targets of tests/reliability/fuzz_targets.py with large budgets;
- concurrency: reader processes searching while a writer syncs (searches/s, errors,
  half-written states seen), and second writers started meanwhile (waited / busy / failed);
- scale: the 100k-note figures of bench/results/scale.json (bench/scale.py measures them);
- a stranger's vault (bench/reliability_stranger.py): planted links, hostile config and
  special files, every command a `lore` process; nothing outside changes, no listener is
  reached, every error is one line.

Writes bench/results/reliability.md and reliability.json (unless --no-write).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.datasets import REPO_ROOT
from bench.report import fmt, info_lines, md_table, run_info, write_outputs

sys.path.insert(0, str(REPO_ROOT / "tests" / "reliability"))

import fuzz_targets as ft  # noqa: E402 - test support shared with tests/reliability
import reliability_harness as h  # noqa: E402

from bench.reliability_hostile import failures as hostile_failures  # noqa: E402
from bench.reliability_hostile import hostile, render_hostile  # noqa: E402
from bench.reliability_kills import embed_kills, index_kills, remember_kills  # noqa: E402
from bench.reliability_stranger import (  # noqa: E402
    render_stranger,
    stranger_section,
    stranger_suite,
)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- fuzz -------------------------------------------------------------------------------------


def _drive(strategy: Any, target: Callable[[Any], None], n: int) -> tuple[int, str | None]:
    """Feed `target` up to n examples of `strategy` (hypothesis); (examples run, failure)."""
    from hypothesis import HealthCheck, given, settings

    count = 0

    @settings(max_examples=n, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value: Any) -> None:
        nonlocal count
        count += 1
        target(value)

    try:
        run()
    except Exception as exc:  # a falsified property: reported in the table, not raised
        return count, f"{type(exc).__name__}: {str(exc)[:300]}"
    return count, None


def fuzz(work: Path, budget: int) -> dict[str, Any]:
    """Run each target of fuzz_targets for `budget` examples; count them and the failures."""
    import lore

    root = work / "fuzz" / "vault"
    root.mkdir(parents=True)
    (root / "a.md").write_text("---\ntitle: Alpha\ntags: [x]\n---\nalpha 客户去重 JIRA-1234\n")
    (work / "fuzz" / "secret.md").write_text(ft.SECRET)
    (root / "link.md").symlink_to(work / "fuzz" / "secret.md")
    (root / "door").symlink_to(work / "fuzz", target_is_directory=True)
    results: dict[str, Any] = {}
    with lore.open(root) as vault:
        vault.sync()
        targets: list[tuple[str, Any, Callable[[Any], None], int]] = [
            ("path checks (Vault.relative_path, Vault.note)", ft.paths,
             lambda p: ft.check_path(vault, p), budget),
            ("MCP read_note paths (decoded, `\\` as `/`, .md added)", ft.paths,
             lambda p: ft.check_read_note(vault, p), budget),
            ("search: query + tag/path/date filters + limit", ft.searches,
             lambda a: ft.check_search(vault, *a), budget),
            ("front matter of any YAML type (sync + show + search)", ft.front_matter,
             lambda fm: ft.check_front_matter(vault, fm), max(budget // 10, 20)),
            ("hostile note text (sync + show + search)", ft.note_texts,
             lambda t: ft.check_note(vault, t), max(budget // 10, 20)),
        ]  # fmt: skip
        for name, strategy, target, n in targets:
            started = time.perf_counter()
            count, error = _drive(strategy, target, n)
            results[name] = {
                "cases": count,
                "failure": error,
                "seconds": time.perf_counter() - started,
            }
            log(f"   {name}: {count} cases, {'FAILED ' + error if error else 'ok'}")
    return results


# -- concurrency ------------------------------------------------------------------------------


def concurrency(work: Path, notes: int, readers: int, seconds: float) -> dict[str, Any]:
    import lore

    k = 12
    root = work / "concurrency" / "vault"
    h.generate_vault(root, notes, 11)
    h.write_group(root, k, 0)
    with lore.open(root) as vault:
        vault.sync()
    phases: dict[str, Any] = {}

    def phase(name: str, writer: Callable[[], dict[str, Any]]) -> None:
        procs = h.start_readers(root, readers, seconds, k)
        started = time.monotonic()
        written = writer()
        results = h.reader_results(procs)
        searches = sum(r["searches"] for r in results)
        phases[name] = {
            "readers": readers,
            "seconds": seconds,  # each reader searched this long, then stopped
            "phase_s": time.monotonic() - started,
            "searches": searches,
            "searches_per_s": searches / seconds,
            "errors": sum(r["errors"] for r in results),
            "torn": sum(r["torn"] for r in results),
            "first_error": next((r["first_error"] for r in results if r["first_error"]), ""),
            **written,
        }
        log(f"   {name}: {json.dumps(phases[name])}")

    def idle() -> dict[str, Any]:
        time.sleep(seconds)
        return {}

    def second_writer() -> str:
        """`lore index` while another process writes: what became of it."""
        proc = subprocess.run(
            h.lore_argv("index", str(root)), env=h.child_env(), capture_output=True, text=True
        )
        if proc.returncode == 0:
            return "second writer waited, then synced"
        if proc.returncode == 1 and proc.stderr.startswith("lore: error: index busy"):
            return "second writer told 'index busy'"
        return f"second writer FAILED: {proc.stderr.strip()[-200:]}"

    def second_writers(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Run `run` while `lore index` processes start every second alongside it."""
        import threading

        results: dict[str, Any] = {}
        thread = threading.Thread(target=lambda: results.update(run()))
        thread.start()
        outcomes: Counter[str] = Counter()
        while thread.is_alive():
            outcomes[second_writer()] += 1
            time.sleep(1.0)
        thread.join()
        return {**results, "second_writers": dict(outcomes)}

    def rebuild() -> dict[str, Any]:
        started = time.perf_counter()
        with lore.open(root) as vault:
            vault.rebuild()
        return {"rebuild_s": time.perf_counter() - started}

    def lock_held() -> dict[str, Any]:
        """A writer stopped inside its transaction for longer than the busy timeout, then
        killed; second writers start once it holds the lock: the first is told "index
        busy", the next waits until the kill frees the lock and syncs. Readers go on."""
        import threading

        h.write_group(root, k, 1000)
        holder = subprocess.Popen(
            [sys.executable, str(h.HERE), "pause-sync", str(root), "3"],
            stdout=subprocess.PIPE,
            text=True,
            env=h.child_env(),
        )
        assert holder.stdout is not None and holder.stdout.readline().strip() == "paused"
        killer = threading.Timer(seconds, lambda: h.kill(holder))
        killer.start()
        outcomes: Counter[str] = Counter()
        for _ in range(2):
            outcomes[second_writer()] += 1
        killer.join()
        return {"second_writers": dict(outcomes)}

    phase("no writer", idle)
    phase("writer holding the lock, then killed", lock_held)
    # (No second writers here: one syncing while the group's files are being rewritten would
    # index a mix of generations that the files themselves held at that moment.)
    phase("writer syncing a changed group again and again",
          lambda: h.write_loop(root, seconds * 0.9, k))  # fmt: skip
    phase("writer rebuilding the whole index", lambda: second_writers(rebuild))
    with lore.open(root) as vault:
        report = vault.doctor()
    return {"notes": notes, "phases": phases, "doctor_ok": report.ok}


# -- scale ------------------------------------------------------------------------------------


def scale_figures(child_result: Path | None = None, notes: int = 100_000) -> dict[str, Any]:
    """The largest vault's figures: from a result file of bench.scale's measuring child
    (`python -m bench.scale --child VAULT QUERIES OUT`) when given, else from
    bench/results/scale.json (what `make bench` has just written)."""
    if child_result is not None:
        big = json.loads(child_result.read_text(encoding="utf-8"))
        when = dt.datetime.fromtimestamp(child_result.stat().st_mtime).astimezone()
        return {
            **{k: big.get(k) for k in ("peak_rss_mb", "full_sync_s", "noop_sync_s", "p50_ms")},
            "notes": notes,
            "date": when.isoformat(timespec="seconds"),
            "git": "this run's tree",
            "source": "bench.scale child",
        }
    path = REPO_ROOT / "bench" / "results" / "scale.json"
    if not path.is_file():
        return {"error": "no bench/results/scale.json: run .venv/bin/python -m bench.scale"}
    data = json.loads(path.read_text(encoding="utf-8"))
    runs = {int(r["notes"]): r for r in data.get("runs", []) if "error" not in r}
    big = runs.get(max(runs)) if runs else None
    if big is None:
        return {"error": "bench/results/scale.json has no successful run"}
    return {
        "notes": big["notes"],
        "peak_rss_mb": big.get("peak_rss_mb"),
        "full_sync_s": big.get("full_sync_s"),
        "noop_sync_s": big.get("noop_sync_s"),
        "p50_ms": big.get("p50_ms"),
        "date": data.get("date"),
        "git": data.get("git"),
        "source": "bench/results/scale.json",
    }


# -- report -----------------------------------------------------------------------------------


def render(info: dict[str, Any], r: dict[str, Any]) -> str:
    lines = ["# Reliability benchmark", "", *info_lines(info), ""]
    rows: list[list[str]] = []
    ix = r.get("index_kills")
    if ix:
        survived = ix["trials"] - ix["outcomes"].get("FAILED", 0)
        rows.append([
            f"`lore index`/`rebuild`/first sync killed (SIGKILL), {ix['notes']} notes",
            f"{ix['killed']} killed mid-run of {ix['trials']} trials",
            f"{survived}/{ix['trials']} recovered with nothing lost",
        ])  # fmt: skip
    for key, label in (("embed_kills", "`lore embed` killed"), ("remember_kills",
                       "`lore remember` killed (64 KB entry)")):  # fmt: skip
        k = r.get(key)
        if k:
            ok = k["trials"] - k["outcomes"].get("FAILED", 0)
            spread = ", ".join(f"{n} {name}" for name, n in sorted(k["outcomes"].items()))
            rows.append([label, spread, f"{ok}/{k['trials']} intact, resumed"])
    fz = r.get("fuzz")
    if fz:
        cases = sum(v["cases"] for v in fz.values())
        failed = [name for name, v in fz.items() if v["failure"]]
        rows.append([
            "fuzz cases tried (paths, read_note, queries+filters, front matter, note text)",
            str(cases),
            "no failure" if not failed else f"FAILED: {', '.join(failed)}",
        ])  # fmt: skip
    cc = r.get("concurrency")
    if cc:
        for name, p in cc["phases"].items():
            extra = ", ".join(f"{n} {k}" for k, n in p.get("second_writers", {}).items())
            rows.append([
                f"{p['readers']} reader processes, {name}",
                f"{p['searches_per_s']:.1f} searches/s ({p['searches']} in {p['seconds']:g} s)",
                f"{p['errors']} errors, {p['torn']} half-written states seen"
                + (f"; {extra}" if extra else ""),
            ])  # fmt: skip
    sc = r.get("scale")
    if sc and "error" not in sc:
        rows.append([
            f"{sc['notes']:,}-note vault ({sc['source']}, {sc['date']}, {sc['git']})",
            f"full sync {fmt(sc['full_sync_s'], 0)} s, no-op {fmt(sc['noop_sync_s'], 2)} s,"
            f" query p50 {fmt(sc['p50_ms'], 1)} ms",
            f"peak RSS {fmt(sc['peak_rss_mb'], 0)} MB (target ≤ 500 MB)",
        ])  # fmt: skip
    elif sc:
        rows.append(["100k-note vault", sc["error"], "not measured"])
    if r.get("stranger"):
        rows += render_stranger(r["stranger"])
    lines += md_table(["what", "measured", "result"], rows) + [""]
    failures = [f for key in ("index_kills", "embed_kills", "remember_kills", "stranger")
                for f in (r.get(key) or {}).get("failures", [])]  # fmt: skip
    if failures:
        lines += ["## Failures", ""] + [f"- {f}" for f in failures[:20]] + [""]
    if r.get("hostile"):
        lines += render_hostile(r["hostile"])
    if ix:
        lines += [
            "## Kill outcomes",
            "",
            *md_table(
                ["outcome", "trials"], [[k, str(n)] for k, n in sorted(ix["outcomes"].items())]
            ),
            "",
        ]
    lines += [
        "Kills: a sync in a subprocess is stopped at a random step of its write transaction"
        " (through its progress callback) or after a random delay, and killed with SIGKILL;"
        " rebuilds and first syncs likewise. Each trial then checks that the index opens, holds"
        " exactly the old or the new state of the files (the semantic layer, refreshed after"
        " the sync's commit, may lag: doctor then says `lore index`), that `lore doctor` reports"
        " exactly that, and that the next sync ends in the same index as an uninterrupted run."
        " `lore embed` must keep whole batches (a vector for every key, the identity recorded"
        " with the first) and resume to the same vectors; `lore remember` must leave the daily"
        " note as it was or with the whole entry appended.",
        "",
        "Concurrency: reader processes search a group of notes that every sync rewrites to a new"
        " generation in one transaction; a reader that saw fewer hits than the group, or two"
        " generations at once, counts a half-written state. Second writers are `lore index`"
        " processes started while another process holds the write lock (stopped inside its"
        " transaction for longer than the 5 s busy timeout, then killed) or rebuilds: they"
        " wait for the lock and sync, or stop with `lore: error: index busy`.",
        "",
    ]
    if r.get("stranger"):
        lines += stranger_section(r["stranger"])
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.reliability", description=__doc__)
    p.add_argument("--notes", type=int, default=2000, help="notes in the crash vault")
    p.add_argument("--kills", type=int, default=24, help="index/rebuild/first-sync kill trials")
    p.add_argument("--side-kills", type=int, default=8, help="embed and remember kill trials")
    p.add_argument("--fuzz", type=int, default=2000, help="examples per fast fuzz target")
    p.add_argument("--readers", type=int, default=4)
    p.add_argument("--seconds", type=float, default=8.0, help="length of each concurrency phase")
    p.add_argument("--hostile", type=int, default=200, help="generated inputs per #13 class")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--stranger", type=int, default=10, help="random plant combinations (stranger's vault)"
    )
    p.add_argument("--quick", action="store_true", help="small sizes, to try the harness")
    p.add_argument(
        "--scale-result",
        type=Path,
        default=None,
        help="a result file of `python -m bench.scale --child` for 100k notes (default: the"
        " largest run in bench/results/scale.json)",
    )
    p.add_argument("--no-write", action="store_true", help="print only, keep results/ as is")
    args = p.parse_args(argv)
    if args.quick:
        args.notes, args.kills, args.side_kills, args.fuzz, args.seconds = 200, 6, 2, 100, 3.0
        args.hostile, args.stranger = 20, 3
    info = run_info("bench.reliability")
    results: dict[str, Any] = {
        "args": {k: v if not isinstance(v, Path) else str(v) for k, v in vars(args).items()}
    }
    work = Path(tempfile.mkdtemp(prefix="lore-reliability-"))
    try:
        log("== kills: lore index / rebuild / first sync")
        results["index_kills"] = index_kills(work, args.notes, args.kills, args.seed)
        log("== kills: lore embed")
        results["embed_kills"] = embed_kills(work, args.side_kills, args.seed)
        log("== kills: lore remember")
        results["remember_kills"] = remember_kills(work, args.side_kills, args.seed)
        log("== fuzz")
        results["fuzz"] = fuzz(work, args.fuzz)
        log("== concurrency")
        results["concurrency"] = concurrency(work, args.notes, args.readers, args.seconds)
        log("== hostile inputs (issue 13)")
        results["hostile"] = hostile(work, args.hostile, args.seed)
        results["scale"] = scale_figures(args.scale_result)
        log("== stranger's vault")
        results["stranger"] = stranger_suite(work, args.stranger, args.seed, singles=not args.quick)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    markdown = render(info, results)
    print(markdown)
    if not args.no_write:
        md_path, json_path = write_outputs("reliability", markdown, {**info, **results})
        log(f"wrote {md_path} and {json_path}")
    failed = (
        any(
            (results.get(k) or {}).get("failures")
            for k in ("index_kills", "embed_kills", "remember_kills", "stranger")
        )
        or any(v["failure"] for v in results["fuzz"].values())
        or hostile_failures(results["hostile"]) > 0
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
