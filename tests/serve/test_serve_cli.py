"""The command line of issue 16: `lore token`, `lore links`, `lore note …` in process, and
`lore serve` as a real process (it prints its URL, answers, and refuses to listen beyond
the loopback without a token). Plus the freshness of a running server: a file written
by hand is found, and a write through the server is found at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import httpx
from click.testing import CliRunner
from serve_support import make_vault, running, wait_for

import lore
from lore.cli import main

LORE = Path(sys.executable).parent / "lore"
NOTE = "public/客户去重规则 v2.md"


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_token_add_list_revoke(tmp_path: Path) -> None:
    root = str(make_vault(tmp_path / "v", clusters=False))
    code, out, err = run("token", "add", "alice", "--as", "guest", "--vault", root)
    assert code == 0 and out.strip().startswith("lore_") and "shown once" in err
    secret = out.strip()
    code, out, _ = run("token", "add", "ops", "--owner", "--write", "--vault", root, "--json")
    assert code == 0 and json.loads(out)["owner"] is True and json.loads(out)["write"] is True
    code, _out, err = run("token", "add", "bob", "--vault", root)
    assert code == 2 and "--as PRINCIPAL or --owner" in err
    code, _out, err = run("token", "add", "alice", "--owner", "--vault", root)
    assert code == 1 and "exists already" in err
    code, out, _ = run("token", "list", "--vault", root, "--json")
    listed = json.loads(out)
    assert [t["name"] for t in listed] == ["alice", "ops"] and "secret" not in out
    assert secret not in out
    code, out, _ = run("token", "revoke", "alice", "--vault", root)
    assert code == 0 and "revoked" in out
    with lore.open(root) as vault:
        assert vault.verify_token(secret) is None
    code, _out, err = run("token", "revoke", "nobody", "--vault", root)
    assert code == 1 and "no token named nobody" in err


def test_links_on_postgresql_are_those_of_the_file(tmp_path: Path, pg_url: str) -> None:
    """`lore links` on PostgreSQL (issue 15): the same outgoing links and backlinks, as the
    owner and as a principal, as the index file gives."""
    root = str(make_vault(tmp_path / "v", clusters=False))
    assert run("index", root, "--db", pg_url)[0] == 0
    for who in ([], ["--as", "guest"]):
        code, file_out, _ = run("links", NOTE, "--vault", root, *who, "--json")
        assert code == 0
        code, server_out, err = run("links", NOTE, "--vault", root, "--db", pg_url, *who, "--json")
        assert code == 0, err
        assert json.loads(server_out) == json.loads(file_out)
    report = json.loads(file_out)
    assert [b["path"] for b in report["backlinks"]] == ["public/架构说明.md"]
    code, out, _ = run("links", NOTE, "--vault", root, "--db", pg_url)
    assert "[[调整方案]] → private/调整方案.md" in out and "backlinks (2)" in out


def test_links_and_note_commands(tmp_path: Path) -> None:
    root = str(make_vault(tmp_path / "v", clusters=False))
    code, out, _ = run("links", NOTE, "--vault", root, "--as", "guest", "--json")
    report = json.loads(out)
    assert code == 0 and [b["path"] for b in report["backlinks"]] == ["public/架构说明.md"]
    code, out, _ = run("links", NOTE, "--vault", root)
    assert "[[调整方案]] → private/调整方案.md" in out and "backlinks (2)" in out
    code, out, _ = run("note", "write", "public/n.md", "-", "--vault", root, stdin="# N\n\nhi\n")
    assert code == 0 and out.startswith("created: public/n.md")
    digest = out.split("hash: ")[1].strip()
    code, _out, err = run(
        "note", "edit", "public/n.md", "--hash", "0" * 64, "--append", "x", "--vault", root
    )
    assert code == 1 and "changed since it was read" in err
    code, out, _ = run(
        "note", "edit", "public/n.md", "--hash", digest, "--append", "more", "--vault", root
    )
    assert code == 0 and (Path(root) / "public/n.md").read_text().endswith("hi\n\nmore\n")
    code, out, _ = run("note", "move", "public/n.md", "public/m.md", "--vault", root)
    assert code == 0 and "public/n.md → public/m.md" in out
    code, out, _ = run("note", "delete", "public/m.md", "--vault", root, "--json")
    trash_id = json.loads(out)["trash_id"]
    code, out, _ = run("note", "trash", "--vault", root)
    assert trash_id in out and "public/m.md" in out
    code, out, _ = run("note", "restore", trash_id, "--vault", root)
    assert code == 0 and (Path(root) / "public/m.md").is_file()
    code, _out, err = run("note", "write", "private/x.md", "x", "--as", "guest", "--vault", root)
    assert code == 1 and "outside what 'guest' may write" in err
    code, _out, err = run("note", "write", "../x.md", "x", "--vault", root)
    assert code == 1 and "leave the vault" in err and not (tmp_path / "x.md").exists()


def test_serve_refuses_what_it_cannot_do_safely(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "v", clusters=False)
    code, _out, err = run("serve", "--host", "0.0.0.0", "--vault", str(root))
    assert code == 1 and "every request will need a token, and there is none" in err
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "a.md").write_text("# a\n")
    code, _out, err = run("serve", "--vault", str(bare))
    assert code == 1 and "has no lore index yet" in err and "lore index" in err
    code, _out, err = run("serve", "--vault", str(root), "--rate", "-1")
    assert code == 1 and "--rate -1" in err
    code, _out, err = run("serve", "--vault", str(root), "--allow-origin", "evil")
    assert code == 1 and "--allow-origin" in err


def test_lore_serve_as_a_process(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "v", clusters=False)
    proc = subprocess.Popen(
        [str(LORE), "serve", "--port", "0", "--vault", str(root), "--watch", "poll"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "lore serve:" in line and "http://127.0.0.1:" in line, line
        url = line.split(" at ")[1].split()[0].rstrip("/")
        status = httpx.get(url + "/api/v1/status", timeout=30).json()
        assert status["notes"] > 0 and status["server"]["write"] is False
        page = httpx.get(url + "/search?q=" + quote("客户"), timeout=30)
        assert page.status_code == 200 and "客户去重规则 v2" in page.text
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) in (0, -signal.SIGINT, 130)
    remaining = proc.stderr.read() if proc.stderr else ""
    assert "Traceback" not in remaining


def test_the_index_follows_the_files(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "v", clusters=False)
    with running(root, allow_write=True) as server, server.client() as client:
        (root / "public" / "手写.md").write_text("# 手写\n\n蓝鲸计划 BLUEWHALE\n", encoding="utf-8")

        def found() -> bool:
            hits = client.get("/api/v1/search", params={"q": "BLUEWHALE"}).json()["hits"]
            return [h["path"] for h in hits] == ["public/手写.md"]

        assert wait_for(found), "the watcher did not take in a file written by hand"
        os.remove(root / "public" / "手写.md")
        assert wait_for(lambda: not client.get("/api/v1/search?q=BLUEWHALE").json()["hits"])
        made = client.post(
            "/api/v1/notes", json={"path": "public/api.md", "text": "# API\n\nORCA\n"}
        )
        assert made.json()["indexed"] is True
        hits = client.get("/api/v1/search", params={"q": "ORCA"}).json()["hits"]
        assert [h["path"] for h in hits] == ["public/api.md"]  # at once, not after the watcher
        status = client.get("/api/v1/status").json()["server"]["sync"]
        assert status["source"] == "polling" and status["batches"] >= 2
