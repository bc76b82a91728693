"""Issue 13's classes 3, 4, 5, 7 and 8 in bench/reliability.py: generated hostile inputs of
each class (not only the issue's examples), counted, with every failure kept.

- 3 one file stops the vault: random out-of-range mtimes; FIFOs and sockets named like
  notes; notes and folders swapped for FIFOs or for links out of the vault mid-sync; random
  ignore rules checked against git (small) and pathological ones against long names;
- 4 tracebacks: every numeric option, variable and setting at generated edge values
  (tests/reliability/bounds_targets.py), filter/query caps, random long tokens, chart
  labels made of math-text characters, SQLITE_FULL at random page limits (index unchanged);
- 5 waits: servers dripping headers or bodies at random rates (a ticking clock: the
  deadline must end each fetch), queries of random length up to 200,000 characters;
- 7 MCP stdio: requests with lone surrogates at random places, broken JSON: each answered;
- 8 addresses: loopback/private/link-local literals and names refused with a listener
  counting connections; compression bombs of random size against random limits, with the
  traced memory peak.
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bounds_targets as bt

from bench.datasets import REPO_ROOT
from bench.report import md_table

sys.path.insert(0, str(REPO_ROOT / "tests" / "report"))  # report_support's made-up maps

SECRET = "HOSTILE-SECRET-91be"


def _count(results: dict[str, Any], name: str, failure: str | None) -> None:
    entry = results.setdefault(name, {"inputs": 0, "failures": 0, "examples": []})
    entry["inputs"] += 1
    if failure is not None:
        entry["failures"] += 1
        if len(entry["examples"]) < 5:
            entry["examples"].append(failure[:300])


def _guard(name: str, run: Callable[..., str | None], *args: Any) -> str | None:
    try:
        return run(*args)
    except Exception as exc:  # noqa: BLE001 - a crash of lore is the failure counted
        return f"{name}: {type(exc).__name__}: {str(exc)[:200]}"


# -- class 3 ----------------------------------------------------------------------------------


def _mtime_case(vault: Any, trial: int, ns: int) -> str | None:
    path = vault.root / f"t{trial}.md"
    path.write_text(f"# t{trial}\nmtimeword{trial}\n")
    try:
        os.utime(path, ns=(0, ns))
    except (OverflowError, OSError):
        return None  # the file system cannot hold it: nothing to test
    vault.sync()
    found = [h.path for h in vault.search(f"mtimeword{trial}")]
    return None if found == [f"t{trial}.md"] else f"mtime {ns}: found {found}"


def _special_case(vault: Any, trial: int, kind: str) -> str | None:
    path = vault.root / f"special{trial}.md"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    report = vault.sync()
    path.unlink()
    return None if any(s.path == path.name for s in report.skipped) else f"{kind} not reported"


def _swap_case(vault: Any, trial: int, kind: str, target: str, outside: Path) -> str | None:
    root = vault.root
    (root / target).write_text(f"# edited\nedited {trial}\n")
    moved = root.parent / f"moved{trial}"

    def swap(_done: int, _total: int, current: str) -> None:
        if current != target:
            return
        if kind == "swap-fifo":
            (root / target).unlink()
            os.mkfifo(root / target)
        elif kind == "swap-link":
            (root / target).unlink()
            (root / target).symlink_to(outside / "secret.md")
        else:
            (root / "notes").rename(moved)
            (root / "notes").symlink_to(outside, target_is_directory=True)

    vault.sync(progress=swap)
    leaked = list(vault.search(SECRET))
    if (root / "notes").is_symlink():  # put the vault back for the next trial
        (root / "notes").unlink()
        moved.rename(root / "notes")
    else:
        (root / target).unlink()
        (root / target).write_text(f"# back\nnote words {trial}\n")
    vault.sync()
    return f"{kind}: the secret was indexed" if leaked else None


def _pathological(line: str, name: str) -> str | None:
    from lore.ingest.ignore import IgnoreRules

    answer = IgnoreRules.from_lines([line]).match_file(name)
    return None if isinstance(answer, bool) else "no answer"


def one_file(work: Path, n: int, rng: random.Random, out: dict[str, Any]) -> None:
    import lore

    root = work / "c3" / "vault"
    outside = work / "c3" / "outside"
    outside.mkdir(parents=True)
    (outside / "secret.md").write_text(f"{SECRET}\n")
    (outside / "deep.md").write_text(f"{SECRET}\n")
    (root / "notes").mkdir(parents=True)
    for i in range(20):
        (root / "notes" / f"n{i}.md").write_text(f"# n{i}\nnote words {i}\n")
    name = "3 one file: stat values, special files, swaps"
    edges = [2**63 - 1, -(2**63)]
    with lore.open(root) as vault:
        vault.sync()
        for trial in range(n):
            kind = rng.choice(["mtime", "fifo", "socket", "swap-fifo", "swap-link", "swap-dir"])
            if kind == "mtime":
                ns = rng.choice(
                    [rng.randrange(-(2**63), 2**63), rng.randrange(2**62, 2**63), *edges]
                )
                _count(out, name, _guard(kind, _mtime_case, vault, trial, ns))
            elif kind in ("fifo", "socket"):
                _count(out, name, _guard(kind, _special_case, vault, trial, kind))
            else:
                target = f"notes/n{rng.randrange(20)}.md"
                _count(out, name, _guard(kind, _swap_case, vault, trial, kind, target, outside))
    pieces = ["a", "b", "*", "**", "?", "/", "[ab]", "[!a]", "x", ".md", "\\*"]
    if shutil.which("git"):
        for _ in range(n):
            lines = [
                "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(3)
            ]
            lines = [("!" if rng.random() < 0.3 else "") + line for line in lines]
            names = ["a", "b", "ab", "x"]
            paths = {"/".join(rng.choices(names, k=rng.randint(1, 3))) + ".md" for _ in range(8)}
            failure = _guard("ignore", _vs_git, work, lines, sorted(paths))
            _count(out, "3 one file: ignore rules (against git)", failure)
    worst = 0.0
    for _ in range(n):
        stars = rng.randint(10, 400)
        line = "".join(rng.choice(["*a", "*", "?", "a", "**/"]) for _ in range(stars)) + "*b"
        path = "/".join("a" * rng.randint(50, 250) for _ in range(rng.randint(1, 4)))
        started = time.perf_counter()
        failure = _guard("ignore", _pathological, line, path)
        worst = max(worst, time.perf_counter() - started)
        _count(out, "3 one file: pathological ignore rules", failure)
    out["3 one file: pathological ignore rules"]["worst_ms"] = round(worst * 1000, 2)


def _vs_git(work: Path, lines: list[str], paths: list[str]) -> str | None:
    from lore.ingest.ignore import IgnoreRules

    repo = work / "git-oracle"
    shutil.rmtree(repo, ignore_errors=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    made = []
    for path in paths:
        try:
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).touch()
            made.append(path)
        except (FileExistsError, NotADirectoryError):
            continue
    (repo / ".gitignore").write_text("\n".join(lines) + "\n")
    answer = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "core.excludesFile=/dev/null",
            "check-ignore",
            "--no-index",
            "--stdin",
        ],
        input="\n".join(made),
        capture_output=True,
        text=True,
    )
    ignored = set(answer.stdout.split())
    rules = IgnoreRules.from_lines(lines)
    wrong = [p for p in made if rules.match_file(p) != (p in ignored)]
    return f"{lines}: {wrong} differ from git" if wrong else None


# -- class 4 ----------------------------------------------------------------------------------


def one_line(work: Path, n: int, rng: random.Random, out: dict[str, Any]) -> None:
    import lore

    root = work / "c4" / "vault"
    source = bt.number_vault(root)
    values = bt.EDGE_VALUES + [
        str(rng.choice([-1, 1]) * 10 ** rng.randint(3, 40)) for _ in range(3)
    ]
    for case in bt.numeric_cli_cases(values):
        failure = _guard("cli", bt.check_cli_number, case, root, source)
        _count(out, "4 one line: numeric options", failure)
    for name in bt.NUMERIC_ENV:
        for value in values:
            failure = _guard(name, bt.check_env_number, name, value, root)
            _count(out, "4 one line: numeric variables", failure)
    for table, keys in bt.TOML_SETTINGS.items():
        for key in keys:
            for value in bt.TOML_NUMBERS:
                failure = _guard(key, bt.check_toml_number, table, key, value, root)
                _count(out, "4 one line: numeric config settings", failure)
    with lore.open(root) as vault:
        for _ in range(n):
            tags = rng.choice([0, 1, 64, 65, 1000])
            glob = rng.choice([0, 1024, 1025, 50_000])
            query = rng.choice([1, 4000, 4001, 100_000])
            failure = _guard("filters", bt.check_filters, vault, tags, glob, query)
            _count(out, "4 one line: filters and query caps", failure)
            token = rng.choice("x中é") * rng.randint(60, 3000)
            word = token[0] * rng.randint(60, 200)
            failure = _guard("token", bt.check_long_token, vault, token, word)
            _count(out, "4 one line: long tokens (search, lookup, context)", failure)
    specials = "$_^\\{}%#&~ $$"
    for _ in range(max(n // 4, 5)):
        label = "".join(rng.choice(specials + "ab 中") for _ in range(rng.randint(1, 40)))
        _count(out, "4 one line: math-text chart labels", _guard("chart", _chart_label, label))
    for trial in range(max(n // 10, 3)):
        failure = _guard("full", _full_disk, work / f"full{trial}", rng)
        _count(out, "4 one line: SQLITE_FULL, index unchanged", failure)


def _chart_label(label: str) -> str | None:
    from report_support import make_map  # tests/report: on the path, see below

    from lore.present import charts

    drawn, _notices = charts.draw_charts(make_map(2, labels=((label, ("a",)), ("plain", ("b",)))))
    return None if len(drawn) == 2 else f"{label!r}: {len(drawn)} charts"


def _state(vault: Any) -> list[Any]:
    return [
        vault.store.query(sql)
        for sql in (
            "SELECT path, hash, mtime_ns FROM notes ORDER BY path",
            "SELECT count(*) FROM fts",
            "SELECT term, df FROM term_df ORDER BY term",
            "SELECT key, value FROM meta ORDER BY key",
        )
    ]


def _full_disk(root: Path, rng: random.Random) -> str | None:
    import lore

    root.mkdir(parents=True)
    (root / "a.md").write_text("alpha\n")
    with lore.open(root) as vault:
        vault.sync()
        before = _state(vault)
        for i in range(rng.randint(50, 300)):
            (root / f"g{i}.md").write_text(" ".join(f"w{i}x{j}" for j in range(200)) + "\n")
        pages = vault.store.query("PRAGMA page_count")[0][0]
        vault.store.db.execute(f"PRAGMA max_page_count = {pages + rng.randint(0, 20)}")
        try:
            vault.sync()
        except lore.IndexFullError as exc:
            if "\n" in str(exc) or "unchanged" not in str(exc):
                return f"message: {exc!r}"
        else:
            return None  # it fitted
        return None if _state(vault) == before else "the index changed"


# -- classes 5 and 8: the network ------------------------------------------------------------


class ScriptServer:
    """A loopback TCP server playing a script per request path: a list of (bytes, delay
    before sending) pairs; `connections` counts what reached it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.scripts: dict[str, list[tuple[bytes, float]]] = {}
        self.connections = 0
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def add(self, script: list[tuple[bytes, float]]) -> str:
        path = f"/case{len(self.scripts)}"
        self.scripts[path] = script
        return f"http://127.0.0.1:{self.port}{path}"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._play, args=(conn,), daemon=True).start()

    def _play(self, conn: socket.socket) -> None:
        with conn:
            try:
                request = conn.recv(65536).split(b" ", 2)
                path = request[1].decode("ascii", "replace") if len(request) > 1 else ""
                for data, delay in self.scripts.get(path, []):
                    if self.stop.wait(delay):
                        return
                    conn.sendall(data)
            except OSError:
                pass

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def _ticking(step: float) -> Callable[[], float]:
    now = [0.0]

    def clock() -> float:
        now[0] += step
        return now[0]

    return clock


def _refused(url: str, expect: str, **options: Any) -> str | None:
    """None when fetching `url` fails with a one-line CaptureError saying `expect`."""
    from lore.capture.fetch import fetch_url
    from lore.errors import CaptureError

    try:
        fetch_url(url, **options)
    except CaptureError as exc:
        return None if expect in str(exc) and "\n" not in str(exc) else str(exc)
    return f"{url} was fetched whole ({expect!r} expected)"


def _bomb(coding: str, output: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31 if coding == "gzip" else 15)
    parts = [packer.compress(bytes(1 << 20)) for _ in range(output >> 20)]
    body = b"".join(parts) + packer.flush()
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
        f"Content-Encoding: {coding}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def network(n: int, rng: random.Random, out: dict[str, Any]) -> None:
    server = ScriptServer()
    headers = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n"
    try:
        for _ in range(n):
            if rng.random() < 0.5:  # endless headers, a byte at a time
                padded = headers + b"X-Pad: " + b"y" * 20000
                script = [(padded[i : i + 1], 0.002) for i in range(len(padded))]
            else:  # a body of 100,000 bytes sent a few at a time
                script = [(headers + b"\r\n", 0.0)] + [(b"x" * rng.randint(1, 4), 0.002)] * 25000
            clock = _ticking(rng.uniform(0.5, 5))
            failure = _refused(
                server.add(script), "took longer than", timeout=rng.uniform(0.5, 30), clock=clock
            )
            _count(out, "5 waits: dripping servers end at the deadline", failure)
        worst = 0
        name = "8 addresses: compression bombs stop at the limit"
        for _ in range(max(n // 5, 4)):
            limit = rng.choice([1, 4, 10]) * 1024 * 1024
            body = _bomb(rng.choice(["gzip", "deflate"]), rng.choice([64, 256, 512]) << 20)
            url = server.add([(body, 0.0)])
            tracemalloc.start()
            failure = _refused(url, "larger than", max_bytes=limit)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            worst = max(worst, peak)
            if failure is None and peak > 3 * limit + (2 << 20):
                failure = f"peak {peak >> 20} MB for a {limit >> 20} MB limit"
            _count(out, name, failure)
        out[name]["peak_mb"] = round(worst / 2**20, 1)
        before = server.connections
        name = "8 addresses: private targets refused"
        hosts = ["127.0.0.1", "localhost", "[::1]", "127.1.2.3", "0.0.0.0", "[::ffff:127.0.0.1]"]
        for _ in range(n):
            target = f"http://{rng.choice(hosts)}:{server.port}/"
            _count(out, name, _refused(target, "private address", allow_private=False))
        reached = server.connections - before
        if reached:
            _count(out, name, f"{reached} connections reached the listener")
        out[name]["connections_reached"] = reached
    finally:
        server.close()


def _query_case(vault: Any, surface: str, text: str) -> str | None:
    import lore

    try:
        getattr(vault, surface)(text)
    except lore.QueryError as exc:
        return None if len(text) > 4000 and "\n" not in str(exc) else f"{len(text)}: {exc}"
    return None if len(text) <= 4000 else f"{surface}: a {len(text)}-character query was run"


def long_queries(work: Path, n: int, rng: random.Random, out: dict[str, Any]) -> None:
    import lore

    root = work / "c5" / "vault"
    root.mkdir(parents=True)
    (root / "a.md").write_text("# 客户\n客户去重规则 alpha\n")
    worst = 0.0
    with lore.open(root) as vault:
        vault.sync()
        for _ in range(n):
            size = rng.choice([10, 2000, 3999, 4000, 4001, 20_000, 200_000])
            text = "".join(rng.choice("客户去重规则数据迁移张三 ab") for _ in range(size))
            surface = rng.choice(["search", "lookup", "context"])
            started = time.perf_counter()
            failure = _guard(surface, _query_case, vault, surface, text)
            _count(out, "5 waits: queries of any length (API)", failure)
            worst = max(worst, time.perf_counter() - started)
    out["5 waits: queries of any length (API)"]["worst_s"] = round(worst, 2)


# -- class 7 ----------------------------------------------------------------------------------


def mcp_stdio(work: Path, n: int, rng: random.Random, out: dict[str, Any]) -> None:
    root = work / "c7" / "vault"
    root.mkdir(parents=True)
    (root / "a.md").write_text("# A\nalpha JIRA-1234\n")
    lore_bin = Path(sys.executable).parent / "lore"
    subprocess.run([str(lore_bin), "index", str(root)], check=True, capture_output=True)
    proc = subprocess.Popen(
        [str(lore_bin), "mcp", "--vault", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(line: bytes) -> dict[str, Any] | None:
        proc.stdin.write(line + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        answer = proc.stdout.readline() if ready else b""  # type: ignore[union-attr]
        return json.loads(answer) if answer else None  # b"": the server is gone

    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "1"},
    }
    send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode())
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    try:
        for ident in range(1, n + 1):
            half = rng.choice("89abAB" if rng.random() < 0.5 else "cdef")  # high or low half
            surrogate = f"\\u{rng.choice('dD')}{half}{rng.randrange(256):02x}"
            query = "".join(
                rng.choice(["a", " ", "中", surrogate]) for _ in range(rng.randint(1, 8))
            )
            if surrogate not in query:
                query += surrogate
            place = rng.choice(["query", "name", "key"])
            args = f'"query":"{query}"' if place != "key" else f'"{surrogate}":"x","query":"a"'
            name = "search" if place != "name" else f"se{surrogate}arch"
            params = f'{{"name":"{name}","arguments":{{{args}}}}}'
            line = f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call","params":{params}}}'
            if rng.random() < 0.2:
                line = line[: rng.randrange(1, len(line))]  # broken JSON: a null id
            answer = send(line.encode())
            ok = answer is not None and ("error" in answer or "result" in answer)
            _count(
                out,
                "7 MCP stdio: unreadable requests answered",
                None if ok else f"no answer to {line[:120]!r}",
            )
    finally:
        proc.stdin.close()
        proc.wait(30)


# -- entry point and report -------------------------------------------------------------------


def hostile(work: Path, budget: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    out: dict[str, Any] = {}
    for name, run in (
        ("class 3", lambda: one_file(work, budget, rng, out)),
        ("class 4", lambda: one_line(work, budget, rng, out)),
        ("class 5", lambda: long_queries(work, budget, rng, out)),
        ("classes 5, 8", lambda: network(budget, rng, out)),
        ("class 7", lambda: mcp_stdio(work, budget, rng, out)),
    ):
        started = time.perf_counter()
        run()
        print(f"   {name}: {time.perf_counter() - started:.0f}s", file=sys.stderr, flush=True)
    return out


def render_hostile(results: dict[str, Any]) -> list[str]:
    rows = []
    for name, entry in results.items():
        extra = ", ".join(
            f"{k} {v}" for k, v in entry.items() if k not in ("inputs", "failures", "examples")
        )
        rows.append(
            [name, str(entry["inputs"]), str(entry["failures"]) + (f" ({extra})" if extra else "")]
        )
    lines = ["## Hostile inputs of issue 13 (classes 3, 4, 5, 7, 8)", ""]
    lines += md_table(["class: what", "generated inputs", "failures"], rows) + [""]
    examples = [f"- {name}: {ex}" for name, e in results.items() for ex in e["examples"]]
    if examples:
        lines += ["Failures seen:", "", *examples, ""]
    lines += [
        "Each input ends well or it is a failure: the sync finishes and indexes nothing from"
        " outside the vault (class 3), every command exits 0 or with one line (4), every fetch"
        " and query ends by its deadline or cap (5), every MCP request gets an answer (7), no"
        " connection reaches a private address when they are refused and no body inflates"
        " past its limit (8). Ignore rules are also compared with `git check-ignore`.",
        "",
    ]
    return lines


def failures(results: dict[str, Any]) -> int:
    return sum(int(e["failures"]) for e in results.values())
