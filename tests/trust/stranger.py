"""A vault from a stranger, and the instruments to watch what lore does with it: shared by
tests/trust (one plant at a time) and bench/reliability_stranger.py (many, generated).

- `PLANTS`: each plants one trick of issue 13's classes 1, 2 and 6 into a vault (a symlink
  at a name lore writes, a FIFO or a folder where a note should be, a config that points
  providers at a listener or the index outside, an unclosed code fence, an ignored memory
  folder);
- `Listener`: a TCP listener on 127.0.0.1 that counts the connections it is sent;
- `tree_state`: every file, link and folder under a folder (hashes, link targets), to see
  that nothing outside the vault changed;
- `judge`: did a lore process end with exit 0 (or check's 1) and at most one line of error;
- `read_only`: a folder or file made read-only for real (a read-only bind mount as root,
  file modes otherwise).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[2] / "src"
TODAY = dt.date.today().isoformat()  # remember writes memory/<TODAY>.md
DIGEST_DAY = "2026-11-21"  # the day a digest input names


# -- instruments -------------------------------------------------------------------------------


class Listener:
    """Counts TCP connections to 127.0.0.1:port and answers each with HTTP 500."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.connections = 0
        self.received = b""
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self._stop:
                conn.close()
                return
            self.connections += 1
            conn.settimeout(2.0)
            try:
                self.received += conn.recv(65536)
                conn.sendall(b"HTTP/1.1 500 Nope\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            except OSError:
                pass
            finally:
                conn.close()

    def close(self) -> None:
        self._stop = True
        try:  # wake the accept() up
            socket.create_connection(self.sock.getsockname(), timeout=1).close()
        except OSError:
            pass
        self.sock.close()
        self.thread.join(timeout=5)


def tree_state(folder: Path, skip: Path | None = None) -> dict[str, str]:
    """path → what it is (file hash and mode, link target, folder, other) for everything
    under `folder`, `skip` (a subfolder, e.g. the vault) left out."""
    state: dict[str, str] = {}
    for base, dirs, files in os.walk(folder, followlinks=False):
        here = Path(base)
        if skip is not None and (here == skip or skip in here.parents):
            dirs[:] = []
            continue
        for name in dirs + files:
            path = here / name
            if skip is not None and path == skip:
                continue
            rel = path.relative_to(folder).as_posix()
            st = os.lstat(path)
            if os.path.islink(path):
                state[rel] = f"link {os.readlink(path)}"
            elif os.path.isdir(path):
                state[rel] = f"folder {st.st_mode:o}"
            elif os.path.isfile(path):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                state[rel] = f"file {st.st_mode:o} {digest}"
            else:
                state[rel] = f"other {st.st_mode:o}"
    return state


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(
        f"{p}: {before.get(p, 'absent')} -> {after.get(p, 'absent')}"
        for p in set(before) | set(after)
        if before.get(p) != after.get(p)
    )


@dataclass
class Outcome:
    command: str
    code: int
    stdout: str
    stderr: str
    verdict: str = ""  # "ok", "one-line error", or "FAILED: why"

    @property
    def failed(self) -> bool:
        return self.verdict.startswith("FAILED")


def judge(
    command: str, code: int, stdout: str, stderr: str, *, findings_ok: bool = False
) -> Outcome:
    """Exit 0 (or 1 with findings, for `check`), or 1 with exactly one `lore: error:` line;
    never a traceback, never a line on stderr that is not lore's own."""
    outcome = Outcome(command, code, stdout, stderr)
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("lore: error: ")]
    strays = [
        line
        for line in lines
        if not line.startswith(("lore: notice: ", "lore: error: ", "lore mcp: "))
    ]
    if "Traceback" in stderr or strays:
        outcome.verdict = f"FAILED: stray output on stderr: {(strays or lines)[:3]}"
    elif code == 0 and not errors:
        outcome.verdict = "ok"
    elif code == 1 and len(errors) == 1:
        outcome.verdict = "one-line error"
    elif code == 1 and not errors and findings_ok:
        outcome.verdict = "ok"
    else:
        outcome.verdict = f"FAILED: exit {code} with {len(errors)} error line(s): {lines[:3]}"
    return outcome


def lore_env(home: Path, **extra: str) -> dict[str, str]:
    """A lore subprocess's environment: no LORE_* from the caller, this checkout's lore,
    the user's config folder at `home`, and TODAY as its date (the plants are dated
    TODAY: a run crossing midnight would otherwise write tomorrow's note past them)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LORE_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    env.update(LORE_HOME=str(home), LORE_TODAY=TODAY, **extra)
    return env


def run_lore(
    args: list[str], env: dict[str, str], cwd: Path, *, stdin: str = "", findings_ok: bool = False
) -> Outcome:
    proc = subprocess.run(
        [sys.executable, "-m", "lore", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )
    return judge(" ".join(args), proc.returncode, proc.stdout, proc.stderr, findings_ok=findings_ok)


def mcp_session(vault: Path, env: dict[str, str], cwd: Path) -> Outcome:
    """`lore mcp --allow-write` over stdio: initialize, list the tools, search, remember,
    status, read a note, one request at a time; then standard input closes and the server
    must exit 0. Every request must get an answer; a tool's error must be one line."""
    calls = [
        ("search", {"query": "客户 去重"}),
        ("remember", {"text": "MCP 写入的结论"}),
        ("status", {}),
        ("read_note", {"path": "rules/客户去重规则 v2.md"}),
    ]
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "stranger", "version": "1"},
    }
    requests = [("initialize", init), ("tools/list", {})]
    requests += [("tools/call", {"name": n, "arguments": a}) for n, a in calls]
    proc = subprocess.Popen(
        [sys.executable, "-m", "lore", "mcp", "--allow-write", "--vault", str(vault)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )
    assert proc.stdin is not None and proc.stdout is not None
    watchdog = threading.Timer(300, proc.kill)  # a server that stops answering is a failure
    watchdog.start()
    problem = None
    try:
        for n, (method, params) in enumerate(requests):
            message = {"jsonrpc": "2.0", "id": n, "method": method, "params": params}
            proc.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
            if n == 0:
                proc.stdin.write('{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
            proc.stdin.flush()
            answer = _answer(proc.stdout, n)
            if answer is None:
                problem = f"no answer to {method}"
                break
            result = answer.get("result", {})
            text = "".join(c.get("text", "") for c in result.get("content", []))
            if result.get("isError") and ("\n" in text.strip() or "internal error" in text):
                problem = f"tool error not one line: {text[:200]!r}"
                break
    except (BrokenPipeError, OSError):
        problem = "the server went away"
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
        stdout = proc.stdout.read()
        stderr = proc.stderr.read() if proc.stderr is not None else ""
        proc.wait()
        watchdog.cancel()
    outcome = judge("mcp (stdio)", proc.returncode, stdout, stderr)
    if problem and not outcome.failed and proc.returncode == 0:
        outcome.verdict = f"FAILED: {problem}"
    return outcome


def _answer(stream: Any, wanted: int) -> dict[str, Any] | None:
    """The JSON-RPC answer with id `wanted` (notifications before it are skipped)."""
    for line in stream:
        message = json.loads(line)
        if message.get("id") == wanted:
            return dict(message)
    return None


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """`path` (a folder or a file) read-only for real while inside: a read-only bind mount
    when running as root (root ignores file modes), its mode bits otherwise. Raises
    OSError when neither can be had here."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    for argv in (["mount", "--bind", str(path), str(path)],
                 ["mount", "-o", "remount,ro,bind", str(path)]):  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            subprocess.run(["umount", str(path)], capture_output=True)
            raise OSError(f"cannot make {path} read-only: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", str(path)], check=True, capture_output=True)


# -- the plants ----------------------------------------------------------------------------------

NOTES = {
    "rules/客户去重规则 v2.md": (
        "---\ntitle: 客户去重规则 v2\ntags: [客户, 去重]\ndate: 2026-10-20\n---\n"
        "# 客户去重规则 v2\n\n手机号 + 邮箱 + 姓名三字段匹配，[[孙八]] 负责审核。\n"
    ),
    "reading/rrf.md": (
        "---\ntitle: Reciprocal rank fusion\ndate: 2026-09-03\n---\n"
        "# Reciprocal rank fusion\n\nFuse ranked lists by 1/(k + rank).\n"
    ),
    "entities/孙八.md": "---\ntype: person\n---\n# 孙八\n\n法务，负责合同审核。\n",
    "memory/2026-11-03.md": "# 2026-11-03\n\n- 和孙八过了合同。\n",
}
TRANSCRIPT = (
    f'{{"role": "user", "content": "{DIGEST_DAY} 评审会", "time": "{DIGEST_DAY}T10:00:00"}}\n'
    '{"role": "assistant", "content": "决定：客户去重规则 v2 下周全量上线。"}\n'
    '{"role": "assistant", "content": "待办：孙八确认合同条款。"}\n'
)


@dataclass
class Stage:
    """Where a stranger's vault sits: `base` holds the vault, the files outside it (the
    user's, which nothing may change), a victim vault beside it, and the user's home."""

    base: Path
    vault: Path
    outside: Path
    victim: Path
    home: Path
    listener_url: str
    planted: list[str] = field(default_factory=list)
    config: dict[str, str] = field(default_factory=dict)  # the vault's [lore] table

    @property
    def secret(self) -> Path:
        return self.outside / "secret.txt"


class Taken(Exception):
    """The place a plant needs is taken by another plant (or reached through a link)."""


def _place(where: Stage, rel: str) -> Path:
    """The path `rel` in the vault, made ready for a plant: refused when a folder on the
    way is a link (a plant must never write outside), its parent folders made."""
    path = where.vault / rel
    for parent in [where.vault / p for p in Path(rel).parents if str(p) != "."]:
        if parent.is_symlink():
            raise Taken(rel)
    if path.is_symlink() or path.exists() and not path.is_file():
        raise Taken(rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    return path


def _link(where: Stage, rel: str, target: Path) -> None:
    link = _place(where, rel)
    link.symlink_to(target, target_is_directory=target.is_dir())


def _link_folder(where: Stage, rel: str, target: Path) -> None:
    """Replace the vault's folder `rel` (and what it holds) with a link to `target`."""
    folder = where.vault / rel
    if folder.is_symlink() or any(p.is_symlink() for p in folder.parents):
        raise Taken(rel)
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.symlink_to(target, target_is_directory=True)


def _lore_table(where: Stage, **values: str) -> None:
    """Settings for the vault's .lore/config.toml (written once, after every plant)."""
    if (where.vault / ".lore").is_symlink():
        raise Taken(".lore")
    where.config.update(values)


PLANTS: dict[str, Callable[[Stage], None]] = {}


def plant(name: str) -> Callable[[Callable[[Stage], None]], Callable[[Stage], None]]:
    def register(function: Callable[[Stage], None]) -> Callable[[Stage], None]:
        PLANTS[name] = function
        return function

    return register


# class 1: links at the names lore writes, and at the folders on the way
@plant("memory folder is a link out")
def _(s: Stage) -> None:
    _link_folder(s, "memory", s.outside)


@plant("today's daily note is a link out")
def _(s: Stage) -> None:
    _link(s, f"memory/{TODAY}.md", s.secret)


@plant("daily note lock is a link out")
def _(s: Stage) -> None:
    _link(s, f"memory/.{TODAY}.md.lock", s.secret)


@plant("daily note lock is a dangling link out")
def _(s: Stage) -> None:
    _link(s, f"memory/.{TODAY}.md.lock", s.outside / "made-by-the-lock")


@plant("digest day's note is a link out")
def _(s: Stage) -> None:
    _link(s, f"memory/{DIGEST_DAY}.md", s.secret)


@plant("entity card is a link to a note inside")
def _(s: Stage) -> None:
    real = _place(s, "people/孙八.md")
    real.write_text(NOTES["entities/孙八.md"], encoding="utf-8")
    _link(s, "entities/孙八.md", real)


@plant("entities folder is a link out")
def _(s: Stage) -> None:
    _link_folder(s, "entities", s.outside)


@plant("report folder is a link out")
def _(s: Stage) -> None:
    _link_folder(s, "reports", s.outside)


@plant("report files are links out")
def _(s: Stage) -> None:
    _link(s, "reports/report.md", s.secret)
    _link(s, "reports/clusters-map.png", s.secret)


@plant("inbox is a link out")
def _(s: Stage) -> None:
    _link_folder(s, "inbox", s.outside)


# class 2: the index and the config
@plant(".lore is a link to another vault's")
def _(s: Stage) -> None:
    if s.config:
        raise Taken(".lore")
    _link_folder(s, ".lore", s.victim / ".lore")


@plant("index file is a link out")
def _(s: Stage) -> None:
    _link(s, ".lore/index.sqlite", s.secret)


@plant("index WAL is a link out")
def _(s: Stage) -> None:
    _link(s, ".lore/index.sqlite-wal", s.secret)


@plant("config points providers at a listener")
def _(s: Stage) -> None:
    _lore_table(
        s,
        embed_provider="openai",
        embed_base_url=s.listener_url,
        embed_model="stolen",
        llm_provider="openai",
        llm_base_url=s.listener_url,
        llm_model="stolen",
    )


@plant("config moves the index out")
def _(s: Stage) -> None:
    _lore_table(s, db=str(s.outside / "index.sqlite"))


@plant("config moves the index out, relatively")
def _(s: Stage) -> None:
    _lore_table(s, db=os.path.relpath(s.outside / "rel.sqlite", s.vault))


@plant("config runs a command")
def _(s: Stage) -> None:
    _lore_table(s, scrape_cmd=f"{sys.executable} -c \"open(r'{s.outside / 'ran.txt'}', 'w')\"")


# special files where lore writes
@plant("today's daily note is a FIFO")
def _(s: Stage) -> None:
    os.mkfifo(_place(s, f"memory/{TODAY}.md"))


@plant("daily note lock is a FIFO")
def _(s: Stage) -> None:
    os.mkfifo(_place(s, f"memory/.{TODAY}.md.lock"))


@plant("today's daily note is a folder")
def _(s: Stage) -> None:
    _place(s, f"memory/{TODAY}.md").mkdir()


# class 6: answers that must be true
@plant("daily note ends in an unclosed fence")
def _(s: Stage) -> None:
    _place(s, f"memory/{TODAY}.md").write_text(
        f"# {TODAY}\n\n```python\nprint('unclosed')\n", encoding="utf-8"
    )


@plant("memory folder is ignored")
def _(s: Stage) -> None:
    _place(s, ".loreignore").write_text("memory/\n", encoding="utf-8")


def stage(base: Path, listener_url: str, plants: list[str]) -> Stage:
    """Lay out `base`: outside/ (the user's files), victim/ (another vault, indexed), home/
    (the user's config folder, empty) and vault/ with NOTES and the `plants` named."""
    where = Stage(
        base, base / "vault", base / "outside", base / "victim", base / "home", listener_url
    )
    where.outside.mkdir(parents=True)
    where.secret.write_text("the user's own file\n", encoding="utf-8")
    (where.outside / "transcript.jsonl").write_text(TRANSCRIPT, encoding="utf-8")
    where.home.mkdir()
    (where.victim / "notes").mkdir(parents=True)
    (where.victim / "notes/v.md").write_text("# Victim\n\nthe victim's note\n", encoding="utf-8")
    for rel, text in NOTES.items():
        path = where.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    victim = run_lore(["index", str(where.victim)], lore_env(where.home), base)
    assert victim.code == 0, victim.stderr
    for name in plants:  # a plant whose place an earlier one took is left out
        try:
            PLANTS[name](where)
        except Taken:
            continue
        where.planted.append(name)
    if where.config:
        table = "".join(f"{k} = {json.dumps(v)}\n" for k, v in where.config.items())
        _place(where, ".lore/config.toml").write_text(f"[lore]\n{table}", encoding="utf-8")
    return where


def commands(where: Stage) -> list[tuple[str, list[str], bool]]:
    """(label, lore arguments, findings exit 1 allowed) run against a stranger's vault."""
    v = ["--vault", str(where.vault)]
    return [
        ("index", ["index", str(where.vault)], False),
        ("search", ["search", "客户 去重", *v], False),
        ("remember", ["remember", "客户去重规则 v2 下周全量上线", "--json", *v], False),
        ("remember again", ["remember", "客户去重规则 v2 下周全量上线", "--json", *v], False),
        ("digest", ["digest", str(where.outside / "transcript.jsonl"), *v], False),
        ("check --fix", ["check", "--fix", *v], True),
        ("report --out", ["report", "--out", str(where.vault / "reports"), *v], False),
        ("ingest", ["ingest", "http://127.0.0.1:9/page", *v], False),
        ("status", ["status", *v], False),
        ("show", ["show", "rules/客户去重规则 v2.md", *v], False),
        ("lookup", ["lookup", "孙八", *v], False),
    ]


def untrue_answers(where: Stage, first: Outcome, again: Outcome, env: dict[str, str]) -> list[str]:
    """What two identical `remember --json` calls said that is not so: `indexed: true` for
    a note the index does not hold, or the same entry written twice."""
    if first.code != 0:
        return []
    said = json.loads(first.stdout)
    shown = run_lore(["show", said["path"], "--vault", str(where.vault)], env, where.base)
    problems = []
    if said["indexed"] != (shown.code == 0):
        problems.append(f"remember said indexed: {said['indexed']}, show exited {shown.code}")
    if again.code == 0:
        second = json.loads(again.stdout)
        if second["created"] or second["anchor"] != said["anchor"]:
            problems.append("the same entry was written twice")
    return problems
