"""`lore report` from the command line: in-process for the options, a few real subprocess
runs end to end (index → clusters build → report)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

from click.testing import CliRunner
from report_support import HOSTILE, TODAY, vault_files

from lore.cli import main


def lore(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LORE_")}
    return subprocess.run(
        [sys.executable, "-m", "lore", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


class Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_end_to_end_index_clusters_report(make_vault: Callable[..., Path], tmp_path: Path) -> None:
    vault = make_vault(vault_files(), index=True)
    assert lore("index", str(vault), cwd=vault).returncode == 0
    built = lore("clusters", "build", "--min-size", "3", cwd=vault)
    assert built.returncode == 0, built.stderr
    out = tmp_path / "report"
    result = lore("report", "--format", "html", "--out", str(out), cwd=vault)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        str(out / "report.html"),
        str(out / "clusters-map.png"),
        str(out / "clusters-trends.png"),
    ]
    for name in ("clusters-map.png", "clusters-trends.png"):
        width, height = png_size(out / name)
        assert width >= 800 and height >= 200
    html = (out / "report.html").read_text(encoding="utf-8")
    parser = Text()
    parser.feed(html)
    assert "script" not in parser.tags
    assert HOSTILE.replace('"', "'") in "".join(parser.text)  # the title, shown as text
    assert html.count("data:image/png;base64,") == 2
    assert 'class="cluster ' in html and "Interest clusters" in html
    assert "(lexical)" in html  # no vectors in this index: the map says so
    md = lore("report", "--out", str(out), cwd=vault)
    assert md.returncode == 0, md.stderr
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "![Interest map](clusters-map.png)" in text and "## Interest clusters" in text
    again = lore("report", cwd=vault)
    assert again.stdout == lore("report", cwd=vault).stdout  # same vault, same day, same text
    assert "Charts: run `lore report --out DIR`" in again.stdout


def test_report_without_clusters_in_a_fresh_vault(make_vault: Callable[..., Path]) -> None:
    vault = make_vault(vault_files(), index=True)
    result = lore("report", "--vault", str(vault), cwd=vault)  # builds the index first
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"# lore report — {vault.name}\n")
    assert result.stdout.count("run `lore clusters build`") == 1
    assert f"today {TODAY}" in result.stdout and "## New notes (3)" in result.stdout


def test_report_of_an_empty_vault_as_html(make_vault: Callable[..., Path], tmp_path: Path) -> None:
    vault = make_vault({}, index=True)
    result = CliRunner().invoke(
        main, ["report", "--vault", str(vault), "--format", "html", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 0, result.output
    html = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    assert "New notes (0)" in html and "<code>lore clusters build</code>" in html
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["report.html"]


def test_report_json(make_vault: Callable[..., Path]) -> None:
    vault = make_vault(vault_files(), index=True)
    result = CliRunner().invoke(
        main, ["report", "--vault", str(vault), "--json", "--since", "2026-11-28"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["window"] == {
        "since": "2026-11-28",
        "until": TODAY,
        "today": TODAY,
        "basis": "since",
        "days": 3,
    }
    assert [n["path"] for n in data["new_notes"]] == [
        "inbox/hostile.md",
        "rules/客户去重规则 v2.md",
    ]
    assert data["clusters"] is None and data["files"] == []
    assert data["entities"][0]["name"] == "张三"


def test_report_today_option_moves_the_window(make_vault: Callable[..., Path]) -> None:
    vault = make_vault(vault_files(), index=True)
    result = CliRunner().invoke(main, ["report", "--vault", str(vault), "--today", "2026-10-05"])
    assert result.exit_code == 0, result.output
    assert "2026-09-29 … 2026-10-05 (the last 7 days)" in result.output
    assert "`reading/old.md` Old reading" in result.output


def test_report_errors_are_one_line(make_vault: Callable[..., Path], tmp_path: Path) -> None:
    vault = make_vault({"a.md": "# a\n"}, index=True)
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    for args, expected in (
        (["--since", "2026-02-30"], "--since"),
        (["--since", "2999"], "after today"),
        (["--today", "soon"], "--today"),
    ):
        result = CliRunner().invoke(main, ["report", "--vault", str(vault), *args])
        assert result.exit_code == 1, (args, result.output)
        assert result.output.startswith("lore: error: ") and expected in result.output
        assert result.output.count("\n") == 1
    for args in (["--format", "pdf"], ["--out", str(blocker)], ["--limit", "0"]):
        usage = CliRunner().invoke(main, ["report", "--vault", str(vault), *args])
        assert usage.exit_code == 2, (args, usage.output)
