"""The kill trials of bench/reliability.py: `lore index` / `rebuild` / a first sync, `lore
embed` and `lore remember`, each killed with SIGKILL and checked by the harness of
tests/reliability (which bench.reliability puts on the path)."""

from __future__ import annotations

import datetime as dt
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import embed_server as es
import reliability_harness as h


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- kills ------------------------------------------------------------------------------------


def index_kills(work: Path, notes: int, kills: int, seed: int) -> dict[str, Any]:
    """Kill syncs of an incremental change (by step and by time), rebuilds and first syncs."""
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    t = time.perf_counter()
    sc = h.prepare(work / "incremental" / "vault", notes, seed, 0.1)
    fresh = h.prepare(work / "fresh" / "vault", max(notes // 4, 50), seed + 1, 0.0, fresh=True)
    log(f"   scenarios ready in {time.perf_counter() - t:.0f}s ({sc.changes})")
    full_run = h.timed_run(sc, "index")
    # Files the sync reads (deleted ones are not read): the steps its progress reports.
    changed = sc.changes["edited"] + sc.changes["touched"] + sc.changes["added"] + 1
    rng = random.Random(seed)
    plan: list[tuple[str, Callable[[], bool], h.Scenario]] = []
    for i in range(kills):
        kind = ("step", "time", "step", "time", "rebuild", "fresh")[i % 6]
        if kind == "step":
            step = rng.randint(1, changed)
            plan.append((f"index at step {step}", lambda s=step: h.kill_at_step(sc, s), sc))
        elif kind == "time":
            delay = rng.uniform(0.0, full_run * 1.05)
            plan.append(
                (f"index after {delay:.2f}s", lambda d=delay: h.kill_after(sc, d, "index"), sc)
            )
        elif kind == "rebuild":
            step = rng.randint(1, notes)
            plan.append(
                (f"rebuild at step {step}", lambda s=step: h.kill_at_step(sc, s, rebuild=True), sc)
            )
        else:
            step = rng.randint(1, fresh.notes)
            plan.append(
                (f"first sync at step {step}", lambda s=step: h.kill_at_step(fresh, s), fresh)
            )
    for label, trial, scenario in plan:
        scenario.restore()
        try:
            killed = trial()
            state = h.verify(scenario)
            outcomes[f"{'killed' if killed else 'finished'}: {state}"] += 1
        except AssertionError as exc:
            failures.append(f"{label}: {exc}")
            outcomes["FAILED"] += 1
        log(f"   {label}: {outcomes.most_common(1)}")
    return {
        "notes": notes,
        "changes": sc.changes,
        "full_run_s": full_run,
        "trials": len(plan),
        "killed": sum(n for k, n in outcomes.items() if k.startswith("killed")),
        "outcomes": dict(outcomes),
        "failures": failures,
    }


def embed_kills(work: Path, kills: int, seed: int) -> dict[str, Any]:
    import lore

    server = es.EmbedServer(delay=0.02)
    root = work / "embed" / "vault"
    h.generate_vault(root, 60, seed)
    with lore.open(root) as vault:
        vault.sync()
    db = root / ".lore" / "index.sqlite"
    saved = db.read_bytes()
    reference = work / "embed" / "reference.sqlite"
    reference.write_bytes(saved)
    os.environ.update(server.env())
    try:
        with lore.open(root, db=reference) as vault:
            vault.embed()
        want = es.vectors_dump(reference)
        outcomes: Counter[str] = Counter()
        failures: list[str] = []
        rng = random.Random(seed)
        for i in range(kills):
            for suffix in ("-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
            db.write_bytes(saved)
            proc = subprocess.Popen(
                h.lore_argv("embed", str(root)),
                env={**h.child_env(), **server.env()},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            h.wait_for_rows(db, "vec_texts", proc)
            time.sleep(rng.uniform(0.0, 1.0))
            killed = h.kill(proc)
            try:
                got = es.vectors_dump(db)
                assert got["unkeyed_vectors"] == [] and got["keys_without_vector"] == []
                assert bool(got["meta"]) == bool(got["keys"])
                with lore.open(root) as vault:
                    report = vault.doctor()
                    assert {p.repair for p in report.problems} <= {"lore embed"}, report.problems
                    vault.embed()
                    assert es.vectors_dump(db) == want
                    assert vault.doctor().ok
                share = len(got["keys"]) / max(len(want["keys"]), 1)
                outcomes["killed mid-way" if killed and share < 1 else "finished"] += 1
            except AssertionError as exc:
                failures.append(f"embed kill {i}: {exc}")
                outcomes["FAILED"] += 1
        return {"trials": kills, "outcomes": dict(outcomes), "failures": failures}
    finally:
        for key in server.env():
            os.environ.pop(key, None)
        server.close()


def remember_kills(work: Path, kills: int, seed: int) -> dict[str, Any]:
    import lore

    root = work / "remember" / "vault"
    h.generate_vault(root, 20, seed)
    with lore.open(root) as vault:
        vault.sync()
    text = "迁移复盘 " + " ".join(f"finding{i} 客户去重规则" for i in range(2100)) + " 结论"
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    rng = random.Random(seed)
    for i in range(kills):
        daily = root / "memory" / f"{dt.date.today().isoformat()}.md"
        daily.parent.mkdir(parents=True, exist_ok=True)
        daily.write_text(f"# {dt.date.today()}\n\nby hand, trial {i}\n", encoding="utf-8")
        before = daily.read_bytes()
        proc = subprocess.Popen(
            h.lore_argv("remember", f"{text} {i}", "--vault", str(root)),
            env=h.child_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.0, 1.0))
        h.kill(proc)
        after = daily.read_bytes()
        try:
            assert after.startswith(before), "the text before was changed"
            added = after[len(before) :].decode("utf-8")
            if not added:
                outcomes["killed before writing"] += 1
            else:
                whole = f"{text} {i}" in added and added.endswith("trust: inferred\n")
                assert whole, f"half an entry: {len(added)} bytes"
                outcomes["entry whole"] += 1
            with lore.open(root) as vault:
                vault.sync()
                assert vault.doctor().ok
        except (AssertionError, UnicodeDecodeError) as exc:
            failures.append(f"remember kill {i}: {exc}")
            outcomes["FAILED"] += 1
    return {"trials": kills, "outcomes": dict(outcomes), "failures": failures}
