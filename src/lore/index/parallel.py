"""Deriving notes on every core: the files are read, parsed and tokenized in worker
processes while the one writer (the sync's transaction, in this process) writes them.

Parsing and tokenizing are most of a first index's time and need nothing but the file,
so workers do them; writing stays in one process and one transaction, in the order a
single-process sync writes, so the index is the same whichever path made it (note ids
included). Results come back in that order through a bounded window of chunks: memory
stays flat however large the vault, and the writer never waits on more than one chunk.

A worker that dies (killed, out of memory, a crash in a C extension) stops the sync with a
one-line error; the transaction is rolled back and the previous index is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from itertools import chain, islice
from pathlib import Path
from typing import TypeVar

from ..errors import ConfigError, IndexError_

T = TypeVar("T")
R = TypeVar("R")

JOBS_ENV = "LORE_INDEX_JOBS"
MAX_JOBS = 64
# Starting a worker costs an interpreter and lore's imports (about half a second on a busy
# machine); below this many notes to derive one process is done before workers are up.
PARALLEL_FROM_NOTES = 500
CHUNK = 32  # notes per task: large enough that pickling costs little, small for progress
WINDOW_PER_JOB = 3  # chunks in flight per worker: each has the next one ready
STOP_WAIT_S = 5.0


class WorkerCrashed(IndexError_):
    """A worker process ended without an answer; the sync wrote nothing."""


def cores() -> int:
    """The cores this process may run on (a container's CPU set, not the host's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def idle_cores(load: float | None = None) -> int:
    """The cores not already busy (by the 1-minute load average, which counts this
    process): a worker on a core others keep busy only adds its start-up and hand-off."""
    n = cores()
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):  # no load average (Windows): take every core
            return n
    return max(1, min(n, n - int(load) + 1))


def parse_jobs(value: str | int, name: str) -> int:
    """A job count from --jobs or LORE_INDEX_JOBS: 1 (one process) to MAX_JOBS."""
    try:
        jobs = int(str(value).strip())
    except ValueError:
        jobs = 0
    if not 1 <= jobs <= MAX_JOBS:
        raise ConfigError(
            f"{name}: {value!r} is not a number of processes from 1 to {MAX_JOBS}",
            hint="1 derives in this process; unset, lore uses the idle cores for a large index",
        )
    return jobs


def requested_jobs(requested: int | None, env: dict[str, str] | None = None) -> int | None:
    """The job count asked for, by --jobs or else LORE_INDEX_JOBS (None: not asked)."""
    environ = os.environ if env is None else env
    if requested is not None:
        return parse_jobs(requested, "--jobs")
    if environ.get(JOBS_ENV, "").strip():
        return parse_jobs(environ[JOBS_ENV], JOBS_ENV)
    return None


def jobs_for(requested: int | None, pending: int, load: float | None = None) -> int:
    """How many worker processes derive `pending` notes (1: none, this process does it).

    A count asked for (requested_jobs) is taken as given, but never more workers than
    there are chunks to hand out; unset, every idle core (idle_cores; `load`: the load
    average, read when None) when there are enough notes to pay for starting workers."""
    if requested is None:
        requested = idle_cores(load) if pending >= PARALLEL_FROM_NOTES else 1
    return max(1, min(requested, -(-pending // CHUNK)))


def ordered_map(
    fn: Callable[[T], R], items: Iterable[T], jobs: int, name_of: Callable[[T], str] = str
) -> Generator[R, None, None]:
    """fn over items, in order; in `jobs` worker processes when jobs > 1. Items are taken
    from `items` as the window needs them: a vault's million tasks are never all held.

    `fn` must be picklable (a module-level function or a functools.partial of one). An
    exception raised by fn reaches the caller as it would in one process; a worker that
    dies raises WorkerCrashed naming (`name_of`) the first item of the chunk it held."""
    if jobs <= 1:
        yield from map(fn, items)
        return
    source = iter(items)
    chunks: Iterator[list[T]] = iter(lambda: list(islice(source, CHUNK)), [])
    ahead = list(islice(chunks, jobs * WINDOW_PER_JOB))
    workers = [_Worker() for _ in range(min(jobs, len(ahead)))]
    # Chunk i goes to worker i mod n and comes back in that order: a static round robin
    # keeps the order without bookkeeping, and each worker has the next chunks queued.
    waiting = chain(ahead, chunks)
    in_flight: deque[list[T]] = deque()
    sent = received = 0
    try:
        while True:
            while len(in_flight) < len(workers) * WINDOW_PER_JOB:
                chunk = next(waiting, None)
                if chunk is None:
                    break
                workers[sent % len(workers)].send(fn, chunk)
                in_flight.append(chunk)
                sent += 1
            if not in_flight:
                return
            yield from workers[received % len(workers)].receive(in_flight.popleft(), name_of)
            received += 1
    finally:
        for worker in workers:
            worker.stop()


class _Worker:
    """One `python -m lore.index.worker` process, fed pickled chunks on its stdin.

    A plain child process rather than multiprocessing: spawn would run the caller's main
    script again in every worker (a script without `if __name__ == "__main__"` would index
    recursively), and fork would copy an open database in a write transaction."""

    def __init__(self) -> None:
        # The worker finds lore where this process found it, installed or not.
        here = str(Path(__file__).resolve().parents[2])
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])),
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lore.index.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        pickle.dump(sys.path, self.stdin)  # the caller's imports resolve in the worker too

    def send(self, fn: Callable[[T], R], chunk: Sequence[T]) -> None:
        try:
            pickle.dump((fn, list(chunk)), self.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.stdin.flush()
        except BrokenPipeError:
            pass  # it died; receive() says so for the chunk it held

    def receive(self, chunk: Sequence[T], name_of: Callable[[T], str]) -> list[R]:
        try:
            status, value = pickle.load(self.stdout)
        except (EOFError, pickle.UnpicklingError):
            code = self.proc.wait()
            more = f" (or one of the {len(chunk) - 1} notes after it)" if len(chunk) > 1 else ""
            raise WorkerCrashed(
                f"an index worker process died (exit status {code}) while deriving"
                f" {name_of(chunk[0])}{more}; nothing was written, the index is as it was",
                hint=f"run `lore index --jobs 1` (or {JOBS_ENV}=1) to index in one process",
            ) from None
        if status == "error":
            raise value
        results: list[R] = value
        return results

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.stdin.close()  # end of input: the worker exits
        try:
            self.proc.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:  # still busy on a chunk nobody will read
            self.proc.kill()
            self.proc.wait()
        self.stdout.close()
