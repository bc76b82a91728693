"""A fake OpenAI-compatible embedding endpoint on 127.0.0.1, and a dump of the vectors an
index holds, for the reliability tests and benchmark."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import apsw


class EmbedServer:
    """An OpenAI-compatible /v1/embeddings on 127.0.0.1 with deterministic vectors (from
    the text's hash and the model name), each request taking `delay` seconds."""

    def __init__(self, dim: int = 8, delay: float = 0.0) -> None:
        import hashlib
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.dim = dim
        self.delay = delay
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests += 1
                time.sleep(server.delay)
                data = []
                for i, text in enumerate(body["input"]):
                    digest = hashlib.sha256(f"{body['model']}|{text}".encode()).digest()
                    vector = [b / 255 - 0.5 for b in digest[: server.dim]]
                    data.append({"index": i, "embedding": vector})
                payload = json.dumps({"data": data}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client was killed mid-request: what the crash tests do

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def env(self, model: str = "hash-8") -> dict[str, str]:
        return {
            "LORE_EMBED_PROVIDER": "openai",
            "LORE_EMBED_BASE_URL": self.base_url,
            "LORE_EMBED_MODEL": model,
            "LORE_EMBED_BATCH": "4",
        }

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def vectors_dump(db_path: Path) -> dict[str, Any]:
    """Vector keys with their vectors (rounded), and the recorded identity: what `lore
    embed` leaves behind, comparable across runs."""
    import sqlite_vec

    con = apsw.Connection(str(db_path))
    try:
        con.enable_load_extension(True)
        con.load_extension(sqlite_vec.loadable_path())
        meta = dict(con.execute("SELECT key, value FROM meta WHERE key LIKE 'embed_%'"))
        has_table = con.execute("SELECT 1 FROM sqlite_master WHERE name = 'vec_items'").fetchone()
        keys = {
            int(i): (str(h), str(ident), str(sp))
            for i, h, ident, sp in con.execute("SELECT id, hash, identity, space FROM vec_texts")
        }
        vectors: dict[int, tuple[float, ...]] = {}
        if has_table:
            for rowid, blob in con.execute("SELECT rowid, embedding FROM vec_items"):
                import numpy as np

                vectors[int(rowid)] = tuple(
                    round(float(x), 5) for x in np.frombuffer(blob, dtype=np.float32)
                )
        return {
            "meta": meta,
            "keys": sorted(keys.values()),
            "vectors": sorted((keys.get(i, ("<no key>",)), v) for i, v in vectors.items()),
            "unkeyed_vectors": sorted(set(vectors) - set(keys)),
            "keys_without_vector": sorted(set(keys) - set(vectors)),
        }
    finally:
        con.close()
