"""The pages in a real browser: the system Chromium driven by Playwright. A Chinese query
typed through the input-method path (composition events: nothing is searched while the
composition is open), its hits, a note with the query marked, a backlink followed, the map
and a click on a point, the language switched; and no error in the browser's console (the
Content Security Policy refuses every inline script and style, so one would show there)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_support import make_vault, running

from bench.serve_screens import CHROMIUM as CHROMIUM_PATH
from bench.serve_screens import CHROMIUM_ARGS as ARGS

CHROMIUM = Path(CHROMIUM_PATH)

if not CHROMIUM.exists():
    if os.geteuid() == 0 or os.environ.get("CI"):  # `make test` installs it as root
        raise RuntimeError(f"{CHROMIUM} is missing: run `make test` as root to install it")
    pytest.skip(
        f"{CHROMIUM} is missing and this is not root: apt-get install chromium fonts-noto-cjk",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = make_vault(tmp_path_factory.mktemp("browser") / "vault")
    with running(root) as server:
        yield server.url


@pytest.fixture
def page(site: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(locale="en-US", base_url=site)
        context.add_init_script("window.loreSearchPauseMs = 30;")
        tab = context.new_page()
        tab.problems = []  # type: ignore[attr-defined]
        tab.on("console", lambda m: m.type == "error" and tab.problems.append(m.text))
        tab.on("pageerror", lambda e: tab.problems.append(str(e)))
        yield tab
        assert tab.problems == [], tab.problems  # CSP violations, script errors
        browser.close()


def _compose(page: Any, steps: list[str], final: str) -> None:
    """Type through an input method: compositionstart, updates, compositionend."""
    page.eval_on_selector(
        "#q",
        """(input, [steps, final]) => {
            input.focus();
            input.dispatchEvent(new CompositionEvent("compositionstart", {data: ""}));
            for (const text of steps) {
                input.value = text;
                input.dispatchEvent(new CompositionEvent("compositionupdate", {data: text}));
                input.dispatchEvent(new InputEvent("input", {data: text, isComposing: true}));
            }
            window.__composed = [steps, final];
        }""",
        [steps, final],
    )


def test_chinese_query_note_backlink_map_language(page: Any) -> None:
    searches: list[str] = []
    page.on(
        "request",
        lambda r: r.headers.get("hx-request") == "true" and searches.append(r.url),
    )
    page.goto("/search")
    _compose(page, ["k", "ke", "kehu", "客户 qu", "客户 quchong"], "客户 去重")
    page.wait_for_timeout(90)  # three pauses: a search would have gone out by now
    assert searches == []
    page.eval_on_selector(
        "#q",
        """(input) => {
            input.value = "客户 去重";
            input.dispatchEvent(new InputEvent("input", {data: "客户 去重", isComposing: true}));
            input.dispatchEvent(new CompositionEvent("compositionend", {data: "客户 去重"}));
        }""",
    )
    page.wait_for_selector("#results .hit")
    assert len(searches) == 1 and "q=%E5%AE%A2%E6%88%B7" in searches[0]
    assert "q=" in page.url  # the address follows the results (hx-push-url)
    count = page.text_content("#results .count") or ""
    assert re.search(r"\d+ hit", count)
    page.click("#results a.title >> text=客户去重规则 v2")
    page.wait_for_selector("h1.note-title")
    assert page.text_content("h1.note-title") == "客户去重规则 v2"
    assert page.locator(".markdown mark").count() > 0  # the query's words are marked
    page.click("#backlinks a >> text=架构说明")
    page.wait_for_selector("h1.note-title >> text=架构说明")
    page.click("nav a[href='/map']")
    page.wait_for_selector("svg.map a.point")
    first = page.locator("svg.map a.point").first
    title = first.get_attribute("data-title")
    first.hover()
    assert title in (page.text_content("#point-info") or "")
    first.click()
    page.wait_for_selector("h1.note-title")
    assert page.text_content("h1.note-title") == title
    assert page.text_content("nav a[href='/search']") == "Search"
    page.click("#lang")
    page.wait_for_selector("nav a[href='/search'] >> text=搜索")
    page.goto("/map")  # the choice is kept (a cookie)
    assert page.text_content("h1") == "兴趣地图"
    page.click("#lang")
    page.wait_for_selector("h1 >> text=Interest map")


def test_search_works_without_javascript(site: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(java_script_enabled=False, base_url=site, locale="zh-CN")
        page = context.new_page()
        page.goto("/search")
        assert page.text_content("nav a[href='/search']") == "搜索"  # Accept-Language
        page.fill("#q", "架构")
        page.press("#q", "Enter")
        page.wait_for_selector("#results .hit")
        assert "架构说明" in (page.text_content("#results") or "")
        browser.close()
