"""`lore ingest` of files, folders and stdin; dedupe; --force; LORE_SCRAPE_CMD; the inbox
setting; and captured notes being ordinary notes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from capture_pages import ARTICLE, ARTICLE_NOISE, ARTICLE_TEXT, ZH_PAGE, ZH_TEXT
from click.testing import CliRunner, Result
from conftest import dump_index, one_line_naming, write_files

import lore
from lore.capture import CaptureOptions, capture
from lore.cli import main
from lore.ingest.parse import parse_note

MakeVault = Callable[..., Path]
LORE = Path(sys.executable).parent / "lore"
CHAT = "群聊记录\n\n张三：客户去重规则定了吗？\n李四：定了，v2。\n"


@pytest.fixture(autouse=True)
def no_capture_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LORE_SCRAPE_CMD", "LORE_INBOX"):
        monkeypatch.delenv(name, raising=False)


def ingest(vault: Path, *args: str, input: bytes | str | None = None) -> Result:
    return CliRunner().invoke(main, ["ingest", *args, "--vault", str(vault)], input=input)


def frontmatter(path: Path) -> dict[str, Any]:
    return parse_note(path.read_text(encoding="utf-8"), path.name).frontmatter


def inbox(vault: Path, folder: str = "inbox") -> list[Path]:
    root = vault / folder
    return sorted(p for p in root.iterdir() if p.is_file()) if root.exists() else []


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    return make_vault(
        {"hand/written.md": "# Hand\n\nA note written by hand.\n"}, name="v", index=True
    )


@pytest.fixture
def clips(tmp_path: Path) -> Path:
    root = tmp_path / "clips"
    write_files(
        root,
        {
            "article.html": ARTICLE,
            "zh/专栏.htm": ZH_PAGE.encode("gbk"),
            "zh/聊天记录.txt": "群聊记录\n\n张三：客户去重规则定了吗？\n李四：定了，v2。\n".encode(
                "gbk"
            ),
            "notes/plan.md": "---\ntitle: Plan\ntags: [work]\n---\n# Plan\n\nShip v2.\n",
            "notes/empty.txt": "   \n",
            "notes/binary.txt": b"\x00\x01\x02 not text",
            "img/a.png": b"\x89PNG",
            "img/b.png": b"\x89PNG",
            "img/c.png": b"\x89PNG",
            "README": "no extension",
            ".hidden/secret.md": "# hidden\n",
            ".DS_Store": b"\x00",
        },
    )
    return root


def test_html_file_uses_its_canonical_url(vault: Path, tmp_path: Path) -> None:
    page = ARTICLE.replace(
        "<head>", '<head><link rel="canonical" href="https://blog.example.com/dedupe">'
    )
    write_files(tmp_path, {"saved.html": page})
    result = ingest(vault, str(tmp_path / "saved.html"))
    assert result.exit_code == 0, result.output
    (note,) = inbox(vault)
    fm = frontmatter(note)
    assert fm["source"] == "https://blog.example.com/dedupe"
    assert fm["platform"] == "web"
    text = note.read_text(encoding="utf-8")
    assert ARTICLE_TEXT[1] in text and ARTICLE_NOISE[1] not in text
    # The same page fetched later under that address is already in the vault.
    again = ingest(vault, "https://blog.example.com/dedupe/?utm_source=rss")
    assert again.exit_code == 0 and "same URL" in again.stdout
    assert len(inbox(vault)) == 1


def test_folder_ingests_supported_files_and_says_what_it_skipped(vault: Path, clips: Path) -> None:
    result = ingest(vault, str(clips), "--tag", "clip")
    assert result.exit_code == 0, result.output
    names = [p.name for p in inbox(vault)]
    assert len(names) == 4, names  # article, 专栏, 聊天记录, plan
    out = result.stdout
    assert "captured 4, skipped 6" in out
    assert "skipped 3 files: unsupported file type (.png)" in out
    assert "unsupported file type (no extension)" in out
    assert "notes/empty.txt: no text to capture (empty)" in out
    assert "notes/binary.txt: binary data" in out
    assert "secret" not in out and "DS_Store" not in out  # hidden files are not looked at
    chat = next(p for p in inbox(vault) if "聊天记录" in p.name)
    assert "张三：客户去重规则定了吗？" in chat.read_text(encoding="utf-8")  # GBK text file
    plan = next(p for p in inbox(vault) if p.name.endswith("-plan.md"))
    assert frontmatter(plan)["tags"] == ["work", "clip"]
    with lore.open(vault) as opened:
        assert opened.status().notes == 5
        assert [h.path for h in opened.search("去重规则", tag="clip", limit=5)]

    # The library reports progress per file, in path order.
    calls: list[tuple[int, int, str]] = []
    with lore.open(vault) as opened:
        capture(opened, str(clips), progress=lambda d, t, name: calls.append((d, t, name)))
    assert [c[:2] for c in calls] == [(i, 6) for i in range(1, 7)]
    assert [c[2] for c in calls] == sorted(c[2] for c in calls)

    # Twice: everything is already there, nothing is written.
    again = ingest(vault, str(clips), "--json")
    assert again.exit_code == 0
    data = json.loads(again.stdout)
    assert data["added"] == [] and len(data["duplicates"]) == 4
    assert {d["reason"] for d in data["duplicates"]} == {"same content"}
    assert len(inbox(vault)) == 4


def test_force_writes_a_new_version_and_keeps_the_old(vault: Path, tmp_path: Path) -> None:
    write_files(tmp_path, {"a.md": "# Alpha\n\nalpha text\n"})
    assert ingest(vault, str(tmp_path / "a.md")).exit_code == 0
    assert "same content" in ingest(vault, str(tmp_path / "a.md")).stdout
    forced = ingest(vault, str(tmp_path / "a.md"), "--force")
    assert forced.exit_code == 0, forced.output
    names = sorted(p.name for p in inbox(vault))
    assert len(names) == 2 and any(n.endswith("-alpha-2.md") for n in names)
    with lore.open(vault) as opened:
        assert len(opened.search("alpha text")) == 2


def test_a_hand_written_note_with_the_same_source_counts(vault: Path) -> None:
    write_files(
        vault,
        {"reading/saved.md": "---\nsource: https://zhuanlan.zhihu.com/p/42\n---\nMy notes.\n"},
    )
    result = ingest(vault, "http://zhuanlan.zhihu.com/p/42/?utm_medium=social")
    assert result.exit_code == 0
    assert "already in the vault" in result.stdout and "reading/saved.md" in result.stdout


def test_stdin_markdown_and_html(vault: Path) -> None:
    result = ingest(vault, "-", "--tag", "chat", input="微信群里的讨论\n\n结论：按 v2 执行。\n")
    assert result.exit_code == 0, result.output
    (note,) = inbox(vault)
    fm = frontmatter(note)
    assert fm["title"] == "微信群里的讨论" and fm["platform"] == "local"
    assert fm["tags"] == ["chat"]
    html = ZH_PAGE.encode("gbk")
    result = ingest(vault, "-", "--title", "专栏文章", "--platform", "zhihu", input=html)
    assert result.exit_code == 0, result.output
    zh = next(p for p in inbox(vault) if "专栏文章" in p.name)
    assert ZH_TEXT[2] in zh.read_text(encoding="utf-8")
    assert frontmatter(zh)["platform"] == "zhihu"
    empty = ingest(vault, "-", input="")
    assert empty.exit_code == 1
    one_line_naming(empty.stderr.rstrip("\n"), "stdin", "empty")


def test_missing_and_unsupported_files(vault: Path, tmp_path: Path) -> None:
    result = ingest(vault, "no/such/file.html")
    assert result.exit_code == 1
    one_line_naming(result.stderr.rstrip("\n"), "no/such/file.html", "no such file")
    write_files(tmp_path, {"scan.pdf": b"%PDF-1.7"})
    pdf = str(tmp_path / "scan.pdf")
    result = ingest(vault, pdf)
    assert result.exit_code == 1
    one_line_naming(result.stderr.rstrip("\n"), pdf, "unsupported file type (.pdf)")
    assert inbox(vault) == []


def test_a_vaults_own_notes_are_not_ingested_again(vault: Path) -> None:
    result = ingest(vault, str(vault / "hand"))
    assert result.exit_code == 0
    assert "already a note of this vault" in result.stdout
    assert inbox(vault) == []


def test_inbox_setting(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n"})
    write_files(vault, {".lore/config.toml": '[lore]\ninbox = "captures/web"\n'})
    assert ingest(vault, str(tmp_path / "a.txt")).exit_code == 0
    assert [p.name for p in inbox(vault, "captures/web")][0].endswith("-a.md")
    monkeypatch.setenv("LORE_INBOX", "from-env")
    assert ingest(vault, str(tmp_path / "b.txt")).exit_code == 0
    assert len(inbox(vault, "from-env")) == 1
    with lore.open(vault, inbox="by-arg") as opened:
        report = capture(opened, str(tmp_path / "c.txt"))
    assert report.added[0].path.startswith("by-arg/")
    monkeypatch.setenv("LORE_INBOX", "../outside")
    bad = ingest(vault, str(tmp_path / "c.txt"), "--force")
    assert bad.exit_code == 1
    one_line_naming(bad.stderr.rstrip("\n"), "LORE_INBOX", "inside the vault")


def test_scrape_cmd_in_a_vault_config_is_ignored_and_said(vault: Path, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    command = f"\"{sys.executable}\" -c \"open(r'{ran}', 'w')\""
    write_files(vault, {".lore/config.toml": f"[lore]\nscrape_cmd = {json.dumps(command)}\n"})
    # Nothing listens on port 9 of 127.0.0.1: only the vault's command could produce a page.
    result = ingest(vault, "http://127.0.0.1:9/a")
    assert result.exit_code == 1 and not ran.exists()
    notice, error = result.stderr.rstrip("\n").split("\n")
    one_line_naming(notice, "ignored scrape_cmd (LORE_SCRAPE_CMD)", "config.toml")
    one_line_naming(error, "http://127.0.0.1:9/a")


SCRAPER = """
import sys, time
url = sys.argv[-1]
mode = sys.argv[1]
if mode == "html":
    sys.stdout.write(open(sys.argv[2], encoding="utf-8").read())
elif mode == "markdown":
    print("# Scraped " + url.rsplit("/", 1)[-1])
    print()
    print("Body scraped by the user's own tool from " + url)
elif mode == "fail":
    print("login required", file=sys.stderr)
    sys.exit(3)
elif mode == "hang":
    time.sleep(30)
"""


@pytest.fixture
def scraper(tmp_path: Path) -> Callable[[str], str]:
    script = tmp_path / "scraper.py"
    script.write_text(SCRAPER, encoding="utf-8")
    page = tmp_path / "page.html"
    page.write_text(ARTICLE, encoding="utf-8")

    def command(mode: str) -> str:
        return f'"{sys.executable}" "{script}" {mode}' + (f' "{page}"' if mode == "html" else "")

    return command


def test_scrape_cmd_replaces_the_fetch(
    vault: Path, scraper: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing listens at these addresses: only the scraper can produce the pages.
    monkeypatch.setenv("LORE_SCRAPE_CMD", scraper("html"))
    url = "https://mp.weixin.qq.com/s/AbCdEf"
    result = ingest(vault, url)
    assert result.exit_code == 0, result.output
    (note,) = inbox(vault)
    fm = frontmatter(note)
    assert fm["source"] == url and fm["platform"] == "wechat"
    assert ARTICLE_TEXT[0] in note.read_text(encoding="utf-8")

    monkeypatch.setenv("LORE_SCRAPE_CMD", scraper("markdown"))
    result = ingest(vault, "https://www.xiaohongshu.com/explore/123")
    assert result.exit_code == 0, result.output
    md = next(p for p in inbox(vault) if p.name.endswith("-scraped-123.md"))
    assert frontmatter(md)["platform"] == "xiaohongshu"

    monkeypatch.setenv("LORE_SCRAPE_CMD", scraper("fail"))
    failed = ingest(vault, "https://example.com/private")
    assert failed.exit_code == 1
    one_line_naming(
        failed.stderr.rstrip("\n"), "https://example.com/private", "status 3", "login required"
    )


def test_scrape_cmd_that_hangs_is_stopped(
    vault: Path, scraper: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LORE_SCRAPE_CMD", scraper("hang"))
    result = ingest(vault, "https://example.com/slow", "--timeout", "0.2")
    assert result.exit_code == 1
    one_line_naming(result.stderr.rstrip("\n"), "https://example.com/slow", "did not finish")
    assert inbox(vault) == []


def test_captured_notes_are_ordinary_notes(vault: Path, clips: Path, make_vault: MakeVault) -> None:
    """The index of a captured note is exactly that of the same file written by hand, and
    an incremental index equals a rebuild."""
    with lore.open(vault) as opened:
        report = capture(opened, str(clips), CaptureOptions(tags=("clip",)))
    assert len(report.added) == 4
    copy = make_vault(name="copy", index=True)
    shutil.copytree(vault, copy, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".lore"))
    for src in vault.rglob("*.md"):  # same bytes and mtime: the files are indistinguishable
        shutil.copystat(src, copy / src.relative_to(vault))
    assert CliRunner().invoke(main, ["index", str(copy)]).exit_code == 0
    captured = dump_index(vault / ".lore" / "index.sqlite")
    by_hand = dump_index(copy / ".lore" / "index.sqlite")
    assert captured == by_hand
    assert CliRunner().invoke(main, ["rebuild", str(vault)]).exit_code == 0
    assert dump_index(vault / ".lore" / "index.sqlite") == captured


def test_real_subprocess_ingest_from_stdin(vault: Path) -> None:
    proc = subprocess.run(
        [str(LORE), "ingest", "-", "--vault", str(vault), "--json", "-t", "pasted"],
        input="# 会议纪要\n\n决定采用客户去重规则 v2。\n".encode(),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["added"][0]["title"] == "会议纪要"
    assert data["sync"]["added"] == [data["added"][0]["path"]]


def test_a_short_gbk_text_file_is_read_as_chinese_and_the_guess_is_said(
    vault: Path, tmp_path: Path
) -> None:
    """A short GBK file has too few bytes for a statistical guess (it read as Korean or
    Big5): it is read as GB18030, and the capture says the encoding was a guess."""
    note = tmp_path / "短.txt"
    note.write_bytes("客户去重规则：按手机号去重。".encode("gbk"))
    result = ingest(vault, str(note))
    assert result.exit_code == 0, result.output
    (written,) = [p for p in inbox(vault) if "短" in p.name]
    assert "客户去重规则：按手机号去重。" in written.read_text(encoding="utf-8")
    assert "read as gb18030 (a guess" in result.stdout
