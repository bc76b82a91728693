"""Latency of the MCP `search` tool (mode4) on the sample vault, through an in-process MCP
client session (the SDK's in-memory transport, initialize handshake as a stdio client does).

    .venv/bin/python -m bench.mcp_latency [--calls 200] [--no-write]

Each call is a whole tools/call round trip: argument reading, the incremental sync every
query tool runs first (nothing changed: stat only), Vault.search, JSON shaping. For scale,
the same queries are timed on Vault.search directly and the no-op sync alone. The vault is
copied to a temporary folder and indexed first, so examples/vault is left untouched.
Writes bench/results/mcp.md and mcp.json (unless --no-write). Needs the `mcp` extra.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from bench.datasets import REPO_ROOT
from bench.metrics import percentile
from bench.report import fmt, info_lines, md_table, run_info, write_outputs

SAMPLE = REPO_ROOT / "examples" / "vault"
QUERIES = (
    "去重",
    "客户去重规则 v2",
    "JIRA-1234",
    "reciprocal rank fusion",
    "那个 GMV 到底算不算退款来着",
    "Zhang San 负责什么",
    "限流 事故",
    "DAU 定义",
    "StarRocks",
    "OKR review",
)
WARMUP = 20


def summary(ms: Sequence[float]) -> dict[str, float]:
    return {
        "calls": len(ms),
        "p50_ms": percentile(ms, 50),
        "p90_ms": percentile(ms, 90),
        "p99_ms": percentile(ms, 99),
        "mean_ms": statistics.fmean(ms),
        "max_ms": max(ms),
    }


def timed(fn: Callable[[], Any], calls: int) -> list[float]:
    out = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


async def mcp_calls(vault_path: Path, calls: int) -> tuple[list[float], int]:
    from mcp import Client

    import lore
    from lore.mcp.server import LoreServer

    ms: list[float] = []
    hits = 0
    with lore.open(vault_path) as vault:
        server = LoreServer(vault)
        async with Client(server.server, mode="legacy") as client:
            for i in range(WARMUP + calls):
                args = {"query": QUERIES[i % len(QUERIES)], "limit": 10, "mode": "mode4"}
                start = time.perf_counter()
                result = await client.call_tool("search", args)
                elapsed = (time.perf_counter() - start) * 1000
                if result.is_error:
                    raise SystemExit(f"search failed: {result.content}")
                data = json.loads(result.content[0].text)  # type: ignore[union-attr]
                if data["mode"] != "mode4":
                    raise SystemExit(f"expected mode4, got {data['mode']}")
                if i >= WARMUP:
                    ms.append(elapsed)
                    hits += len(data["hits"])
    return ms, hits


def direct_calls(vault_path: Path, calls: int) -> tuple[list[float], list[float]]:
    import lore

    with lore.open(vault_path) as vault:
        for query in QUERIES * 2:
            vault.search(query, limit=10, mode="mode4")
        counter = iter(range(10**9))
        search = timed(
            lambda: vault.search(QUERIES[next(counter) % len(QUERIES)], limit=10, mode="mode4"),
            calls,
        )
        sync = timed(vault.sync, calls)
    return search, sync


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    info = run_info("bench.mcp_latency")
    with tempfile.TemporaryDirectory(prefix="lore-mcp-bench-") as tmp:
        vault_path = Path(tmp) / "vault"
        shutil.copytree(SAMPLE, vault_path, ignore=shutil.ignore_patterns(".lore"))
        import lore

        with lore.open(vault_path) as vault:
            vault.sync()
            notes = vault.status().notes
        mcp_ms, hits = anyio.run(mcp_calls, vault_path, args.calls)
        search_ms, sync_ms = direct_calls(vault_path, args.calls)
    rows = {
        "MCP search tool (tools/call round trip)": summary(mcp_ms),
        "Vault.search alone": summary(search_ms),
        "Vault.sync alone (nothing changed)": summary(sync_ms),
    }
    data = {"info": info, "vault": "examples/vault", "notes": notes, "queries": list(QUERIES)}
    data |= {"warmup": WARMUP, "hits_returned": hits, "results": rows}
    lines = [
        "# MCP tool latency",
        "",
        *info_lines(info),
        "",
        f"`search` (mode4, limit 10) on examples/vault ({notes} notes), {args.calls} calls after"
        f" {WARMUP} warm-up calls, cycling over {len(QUERIES)} queries; in-process client over"
        " the SDK's in-memory transport. Each call includes the incremental sync every query"
        " tool runs first.",
        "",
        *md_table(
            ["what", "calls", "p50 ms", "p90 ms", "p99 ms", "mean ms", "max ms"],
            [
                [
                    name,
                    str(r["calls"]),
                    fmt(r["p50_ms"], 2),
                    fmt(r["p90_ms"], 2),
                    fmt(r["p99_ms"], 2),
                    fmt(r["mean_ms"], 2),
                    fmt(r["max_ms"], 2),
                ]
                for name, r in rows.items()
            ],
        ),
        "",
    ]
    markdown = "\n".join(lines)
    print(markdown)
    if not args.no_write:
        md_path, _ = write_outputs("mcp", markdown, data)
        print(f"wrote {md_path.relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()
