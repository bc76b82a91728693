"""The pages over HTTP (no browser): the htmx partial, the edit form with its hash guard
and CSRF token, sign-in and sign-out, the language, error pages, and the rendered note
(raw HTML shown as text, links limited, headings as anchors, wikilinks resolved)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from serve_support import make_vault, running

import lore
from lore.serve.render import render_note

NOTE = "public/客户去重规则 v2.md"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[dict[str, Any]]:
    root = make_vault(tmp_path / "vault", clusters=False)
    with lore.open(root) as vault:
        secret = vault.add_token("writer", principal="guest", can_write=True).secret
    with running(root, require_token=True, allow_write=True) as server:
        yield {"server": server, "root": root, "secret": secret}


@contextmanager
def _signed_in(site: dict[str, Any]) -> Iterator[Any]:
    with site["server"].client() as client:
        answer = client.post("/login", data={"token": site["secret"], "next": "/search"})
        assert answer.status_code == 303
        yield client


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found is not None
    return found.group(1)


def test_pages_need_sign_in_and_sign_out_ends_it(site: dict[str, Any]) -> None:
    with site["server"].client() as anonymous:
        answer = anonymous.get("/map")
        assert answer.status_code == 303 and answer.headers["location"] == "/login?next=/map"
        assert anonymous.get("/static/app.css").status_code == 200  # public files
        assert "lore_" not in anonymous.get("/login").text
    with _signed_in(site) as client:
        page = client.get("/search")
        assert "guest" in page.text  # who you are, on every page
        out = client.post("/logout", data={"csrf": _csrf(page.text)})
        assert out.status_code == 303 and 'lore_token=""' in out.headers["set-cookie"]
        client.cookies.clear()
        assert client.get("/search").status_code == 303


def test_htmx_gets_only_the_results(site: dict[str, Any]) -> None:
    with _signed_in(site) as client:
        whole = client.get("/search", params={"q": "客户"})
        part = client.get("/search", params={"q": "客户"}, headers={"HX-Request": "true"})
        assert whole.text.startswith("<!doctype html>") and "<form" in whole.text
        assert part.text.startswith('<section id="results"') and "<form" not in part.text
        assert part.headers["vary"].startswith("HX-Request")
        empty = client.get("/search", params={"q": "qqzzxx"})
        assert "No note matches." in empty.text
        bad = client.get("/search", params={"q": "客户", "since": "2026-13"})
        assert bad.status_code == 200 and 'class="error"' in bad.text and "since" in bad.text


def test_the_edit_form_is_guarded(site: dict[str, Any]) -> None:
    root: Path = site["root"]
    with _signed_in(site) as client:
        form = client.get(f"/edit/{quote(NOTE)}")
        assert form.status_code == 200
        base = re.search(r'name="base_hash" value="([0-9a-f]{64})"', form.text)
        assert base is not None
        token = _csrf(form.text)
        (root / NOTE).write_text("changed by hand\n", encoding="utf-8")  # meanwhile
        stale = client.post(
            f"/edit/{quote(NOTE)}",
            data={"csrf": token, "base_hash": base.group(1), "text": "mine"},
        )
        assert stale.status_code == 409 and 'id="conflict"' in stale.text
        assert ">mine</textarea>" in stale.text and "changed by hand" in stale.text
        assert (root / NOTE).read_text(encoding="utf-8") == "changed by hand\n"
        fresh = re.search(r'name="base_hash" value="([0-9a-f]{64})"', stale.text)
        assert fresh is not None
        saved = client.post(
            f"/edit/{quote(NOTE)}",
            data={"csrf": token, "base_hash": fresh.group(1), "text": "mine"},
        )
        assert saved.status_code == 303 and saved.headers["location"] == "/note/" + quote(NOTE)
        assert (root / NOTE).read_text(encoding="utf-8") == "mine"
        forged = client.post(f"/edit/{quote(NOTE)}", data={"base_hash": "x", "text": "forged"})
        assert forged.status_code == 403
        outside = client.get(f"/edit/{quote('private/调整方案.md')}")
        assert outside.status_code == 404
        assert (root / NOTE).read_text(encoding="utf-8") == "mine"


def test_language_and_error_pages(site: dict[str, Any]) -> None:
    with _signed_in(site) as client:
        zh = client.get("/map", headers={"Accept-Language": "zh-CN,zh;q=0.9"})
        assert "兴趣地图" in zh.text and 'lang="zh-CN"' in zh.text
        en = client.get("/map?lang=en", headers={"Accept-Language": "zh-CN"})
        assert "Interest map" in en.text and "lore_lang=en" in en.headers["set-cookie"]
        kept = client.get("/map", headers={"Accept-Language": "zh-CN"})
        assert "Interest map" in kept.text
        missing = client.get("/nothing/here")
        assert missing.status_code == 404 and 'data-code="not_found"' in missing.text
        bad = client.get("/note/" + quote("../x.md"))
        assert bad.status_code in (400, 404) and "Traceback" not in bad.text


def test_notes_render_safely() -> None:
    body = (
        "# 标题\n\n<script>alert(1)</script> <img src=x onerror=alert(1)>\n\n"
        "[js](javascript:alert(1)) [data](data:text/html,x) [web](https://example.com)"
        " [up](../../etc/passwd) [[张三]] [[不存在|别名]] ![pic](https://tracker.example/p.png)\n\n"
        "## 去重规则\n\n去重 v2\n\n## 去重规则\n"
    )
    html, toc = render_note(body, here="a/b.md", links={"张三": "entities/张三.md"}, query="去重")
    assert "<script>" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert 'href="javascript:' not in html and 'href="data:' not in html
    assert 'href="https://example.com" rel="noopener noreferrer nofollow"' in html
    assert 'href="#">up</a>' in html  # a relative link that climbs out leads nowhere
    assert 'href="/note/entities/%E5%BC%A0%E4%B8%89.md"' in html
    assert 'class="wikilink dangling"' in html and "别名" in html
    assert "tracker.example/p.png" in html and ' src="' not in html  # shown, never loaded
    assert "<mark>去重</mark>" in html
    assert [anchor for _level, _text, anchor in toc] == ["标题", "去重规则", "去重规则-1"]


def test_both_languages_say_everything() -> None:
    from lore.serve.i18n import MESSAGES, TRENDS

    assert set(MESSAGES["en"]) == set(MESSAGES["zh"])
    assert set(TRENDS["en"]) == set(TRENDS["zh"])
    same = [k for k in MESSAGES["en"] if MESSAGES["en"][k] == MESSAGES["zh"][k]]
    assert same == ["app"], same  # every word but the name is translated


def test_obsidian_comments_are_set_apart_not_run() -> None:
    body = "a %% 不要 <b>改</b> %% b\n\n`%% code %%` and 50%% off\n"
    html, _toc = render_note(body, here="a.md", links={}, query="改")
    assert '<span class="comment">%% 不要 &lt;b&gt;<mark>改</mark>&lt;/b&gt; %%</span>' in html
    assert "<code>%% code %%</code>" in html and "50%% off" in html
