"""Round trips to a PostgreSQL server, counted from the client's side of the protocol
(issue 15): libpq's trace of one connection, and the server's `ReadyForQuery` messages in
it. The client waits for one after each statement it sends alone, or after a whole
pipeline of statements, so the count is the number of times it waited for the server,
whatever the statements were (a COPY, a statement of several parts, a pipeline)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def counted(conn: Any) -> Iterator[list[int]]:
    """Count the round trips of `conn` (a psycopg connection) inside the block: the count
    is in the list's one item when the block ends."""
    from psycopg import pq

    box = [0]
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as trace:
        conn.pgconn.trace(trace.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            yield box
        finally:
            conn.pgconn.untrace()  # flushes the trace
            trace.seek(0)
            box[0] = sum(
                1 for line in trace if line.startswith("B\t") and "\tReadyForQuery" in line
            )
