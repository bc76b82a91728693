"""`lore serve` in a background thread of this process, on a free port of 127.0.0.1: for
the tests and the benchmarks, which talk to it over real HTTP.

    with Background(root, ServeOptions(port=0)) as server:
        httpx.get(server.url + "/api/v1/status")
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn

from ..mcp.server import bind
from .app import Server, create_app
from .options import ServeOptions


class Background:
    def __init__(self, root: Path, options: ServeOptions, *, db: str | None = None) -> None:
        sock = bind(options.port, options.host)
        self.port = int(sock.getsockname()[1])
        self.url = f"http://{options.host}:{self.port}"
        self.server = Server(root, db, options, self.port)
        config = uvicorn.Config(
            create_app(self.server), log_level="warning", lifespan="on", server_header=False
        )
        self.uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self.uvicorn.serve(sockets=[sock])),
            name="lore-serve",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self.uvicorn.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                self.stop()
                raise RuntimeError("lore serve did not start")
            time.sleep(0.02)
        self.server.freshness.ready.wait(30)  # the first sync of the watcher

    def client(self, token: str | None = None, **kwargs: Any) -> Any:
        """An httpx client for this server (with a bearer token)."""
        import httpx

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60, **kwargs)

    def stop(self) -> None:
        self.uvicorn.should_exit = True
        self._thread.join(timeout=30)

    def __enter__(self) -> Background:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
