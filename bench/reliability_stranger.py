"""The "stranger's vault" suite of bench/reliability.py (issue 13): vaults carrying the
planted links, config settings and special files of tests/trust/stranger.py (each plant
alone, then random combinations) are indexed, searched, remembered into, digested,
checked with --fix, reported, captured into and served over MCP (stdio), every command a
real `lore` process. Afterwards nothing outside the vault may have changed (the folder
around it hashed before and after, another vault's index included), no connection may
have reached the listener the vault's config names (only the user's own endpoint, an
embedding server set in the environment, may be reached), and every command must have
exited 0 (or `check` 1 with findings) or with one line of error; and `remember` must have
told the truth (`indexed: true` only for a note the index holds, the same entry written
once).

The suite's function is `stranger_suite`; `render_stranger` gives its table rows.
"""

from __future__ import annotations

import random
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.datasets import REPO_ROOT

for _support in ("reliability", "trust"):  # test support shared with tests/
    sys.path.insert(0, str(REPO_ROOT / "tests" / _support))

import embed_server as es  # noqa: E402
import stranger as st  # noqa: E402


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def variants(n_random: int, seed: int) -> list[list[str]]:
    """Each plant alone, then `n_random` random combinations of 2 to 6 plants."""
    names = list(st.PLANTS)
    rng = random.Random(seed)
    combos = [rng.sample(names, rng.randint(2, min(6, len(names)))) for _ in range(n_random)]
    return [[name] for name in names] + combos


def stranger_suite(work: Path, n_random: int, seed: int, *, singles: bool = True) -> dict[str, Any]:
    listener = st.Listener()
    user_endpoint = es.EmbedServer()
    plans = variants(n_random, seed)
    if not singles:
        plans = plans[len(st.PLANTS) :]
    verdicts: Counter[str] = Counter()
    per_command: dict[str, Counter[str]] = {}
    failures: list[str] = []
    planted: Counter[str] = Counter()
    untrue_total = 0
    started = time.perf_counter()
    try:
        for i, plan in enumerate(plans):
            base = work / "stranger" / f"v{i:03d}"
            where = st.stage(base, listener.url, plan)
            planted.update(where.planted)
            env = st.lore_env(where.home, **user_endpoint.env(), LORE_EMBED_API_KEY="sk-user")
            before = st.tree_state(base, skip=where.vault)
            heard = listener.connections
            outcomes = {
                label: st.run_lore(args, env, base, findings_ok=findings_ok)
                for label, args, findings_ok in st.commands(where)
            }
            outcomes["mcp (stdio)"] = st.mcp_session(where.vault, env, base)
            for label, outcome in outcomes.items():
                verdict = "FAILED" if outcome.failed else outcome.verdict
                verdicts[verdict] += 1
                per_command.setdefault(label, Counter())[verdict] += 1
                if outcome.failed:
                    failures.append(f"{where.planted}: {label}: {outcome.verdict[:300]}")
            untrue = st.untrue_answers(where, outcomes["remember"], outcomes["remember again"], env)
            untrue_total += len(untrue)
            failures += [f"{where.planted}: {problem}" for problem in untrue]
            changed = st.changes(before, st.tree_state(base, skip=where.vault))
            if changed:
                failures.append(f"{where.planted}: outside the vault changed: {changed[:5]}")
            if listener.connections != heard:
                failures.append(
                    f"{where.planted}: {listener.connections - heard} connection(s) reached"
                    " the vault's listener"
                )
            seen = Counter("FAILED" if o.failed else o.verdict for o in outcomes.values())
            log(f"   {i + 1}/{len(plans)} {where.planted}: {dict(seen)}")
            shutil.rmtree(base, ignore_errors=True)
    finally:
        listener.close()
        user_endpoint.close()
    return {
        "singles": singles,
        "variants": len(plans),
        "plants": len(st.PLANTS),
        "planted": dict(planted),
        "commands": sum(verdicts.values()),
        "verdicts": dict(verdicts),
        "per_command": {k: dict(v) for k, v in per_command.items()},
        "vault_listener_connections": listener.connections,
        "user_endpoint_requests": user_endpoint.requests,
        "untrue_answers": untrue_total,
        "failures": failures,
        "seconds": time.perf_counter() - started,
    }


def render_stranger(r: dict[str, Any]) -> list[list[str]]:
    """Rows for the reliability table."""
    v = r["verdicts"]
    made = (
        f"{r['plants']} plants alone, then random combinations"
        if r["singles"]
        else "random combinations of the plants"
    )
    return [
        [
            f"stranger's vault: {r['variants']} vaults ({made}), 12 `lore` processes each"
            " (index, search, remember ×2, digest, check --fix, report --out, ingest, status,"
            " show, lookup, mcp stdio)",
            f"{r['commands']} commands: {v.get('ok', 0)} exit 0, {v.get('one-line error', 0)}"
            " one-line errors",
            f"{v.get('FAILED', 0)} failed; {len(r['failures'])} problems (outside changed,"
            " listener reached, traceback or more than one line, untrue answer:"
            f" {r['untrue_answers']})",
        ],
        [
            "stranger's vault: connections",
            f"{r['vault_listener_connections']} to the listener the vault's config names;"
            f" {r['user_endpoint_requests']} requests to the user's own embedding endpoint",
            "no connection reached a listener but the user's own endpoint"
            if r["vault_listener_connections"] == 0
            else "FAILED: the vault's listener was reached",
        ],
    ]


def stranger_section(r: dict[str, Any]) -> list[str]:
    """The section below the table: outcomes per command, the plants, what was checked."""
    from bench.report import md_table

    rows = [
        [label, str(c.get("ok", 0)), str(c.get("one-line error", 0)), str(c.get("FAILED", 0))]
        for label, c in r["per_command"].items()
    ]
    return [
        "## Stranger's vault",
        "",
        *md_table(["command", "exit 0", "one-line error", "failed"], rows),
        "",
        "Plants (vaults carrying each): "
        + ", ".join(f"{name} ({n})" for name, n in sorted(r["planted"].items()))
        + ".",
        "",
        "Each vault sits in a folder with the user's own files, another vault (indexed) and"
        " the user's config folder; that folder is hashed (every file, link and folder)"
        " before the commands and after, the vault itself left out. A listener on 127.0.0.1"
        " is what the vault's config names as embedding and LLM endpoint; the user's own"
        " embedding endpoint (another server on 127.0.0.1) is set in the environment, with"
        " an API key. A command passes with exit 0 (`check`: 1 with findings) or exit 1 and"
        " one `lore: error:` line, never a traceback or another line on stderr; the MCP"
        " server must answer every request and exit 0 when its input closes; `remember`"
        " must say `indexed: true` only for a note `lore show` finds, and write the same"
        " entry once.",
        "",
    ]
