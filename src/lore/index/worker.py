"""The worker process of lore.index.parallel: `python -m lore.index.worker`.

Reads the parent's sys.path, then (function, chunk) pairs, pickled, on stdin until it
closes; answers each with ("ok", results) or ("error", exception) on stdout. Nothing
else may reach stdout, so anything printed goes to stderr.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from typing import Any, BinaryIO


def serve(source: BinaryIO, sink: BinaryIO) -> None:
    sys.path[:] = pickle.load(source)
    while True:
        try:
            fn, chunk = pickle.load(source)
        except EOFError:
            return
        answer: tuple[str, Any]
        try:
            answer = ("ok", [fn(item) for item in chunk])
        except Exception as exc:  # handed to the parent, which raises it as one process would
            answer = ("error", exc)
        try:
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # an exception that cannot be pickled: its text then
            data = pickle.dumps(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
        sink.write(data)
        sink.flush()


def main() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the sync and closes our
    # input, so a worker ends quietly on end of input instead of printing a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sink = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # a stray print must not corrupt the answers
    serve(sys.stdin.buffer, sink)


if __name__ == "__main__":
    main()
