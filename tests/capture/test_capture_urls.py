"""URL normalisation (the dedupe key), the recorded source, and the platform of a host."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from conftest import one_line_naming
from hypothesis import given
from hypothesis import strategies as st

from lore.capture.urls import (
    TRACKING_PARAMS,
    check_url,
    clean_url,
    guess_platform,
    is_tracking_param,
    url_key,
)
from lore.errors import CaptureError

SAME_PAGE = [
    "https://example.com/posts/dedupe",
    "http://example.com/posts/dedupe",
    "https://EXAMPLE.com/posts/dedupe/",
    "https://example.com:443/posts/dedupe",
    "https://example.com/posts/dedupe#comments",
    "https://example.com/posts/dedupe?utm_source=newsletter&utm_medium=email",
    "https://example.com/posts/dedupe?fbclid=IwAR0abc",
    "https://example.com/posts/dedupe/?spm=a2c4g.11186623&gclid=x",
    "https://example.com/posts/%64edupe",
]


def test_one_page_many_addresses() -> None:
    keys = {url_key(u) for u in SAME_PAGE}
    assert keys == {"example.com/posts/dedupe"}


def test_different_pages_differ() -> None:
    distinct = [
        "https://example.com/posts/dedupe",
        "https://example.com/posts/dedupe-v2",
        "https://example.com/posts/dedupe?id=2",
        "https://example.com:8080/posts/dedupe",
        "https://blog.example.com/posts/dedupe",
        "https://example.com/Posts/dedupe",  # paths are case-sensitive
    ]
    assert len({url_key(u) for u in distinct}) == len(distinct)


def test_wechat_article_identity_survives() -> None:
    shared = (
        "https://mp.weixin.qq.com/s?__biz=MzA3&mid=265&idx=1&sn=8f3a&chksm=84d1"
        "&scene=21&sharer_sharetime=1700&sharer_shareid=abc#wechat_redirect"
    )
    plain = "https://mp.weixin.qq.com/s?__biz=MzA3&mid=265&idx=1&sn=8f3a"
    other = "https://mp.weixin.qq.com/s?__biz=MzA3&mid=265&idx=2&sn=8f3a"
    assert url_key(shared) == url_key(plain)
    assert url_key(other) != url_key(plain)


def test_query_order_and_encoding_do_not_matter() -> None:
    assert url_key("https://a.cn/p?b=2&a=1") == url_key("https://a.cn/p?a=1&b=2")
    assert url_key("https://a.cn/文章?q=去重") == url_key(
        "https://a.cn/" + quote("文章") + "?q=" + quote("去重")
    )
    assert url_key("https://例子.中国/a") == url_key("https://xn--fsqu00a.xn--fiqs8s/a")


def test_clean_url_keeps_the_address_but_not_the_tracking() -> None:
    assert (
        clean_url("https://example.com/a/?id=3&utm_source=x&fbclid=y#top")
        == "https://example.com/a/?id=3"
    )
    assert clean_url("https://example.com/a") == "https://example.com/a"
    assert clean_url("https://example.com/?utm_source=x") == "https://example.com/"


def test_non_urls_are_their_own_key() -> None:
    assert url_key(" notes/scan.pdf ") == "notes/scan.pdf"
    assert url_key("mailto:someone@example.com") == "mailto:someone@example.com"


@pytest.mark.parametrize(
    ("url", "platform"),
    [
        ("https://mp.weixin.qq.com/s/abc", "wechat"),
        ("https://www.xiaohongshu.com/explore/1", "xiaohongshu"),
        ("https://www.bilibili.com/video/BV1", "bilibili"),
        ("https://b23.tv/xyz", "bilibili"),
        ("https://www.douyin.com/video/1", "douyin"),
        ("https://zhuanlan.zhihu.com/p/123", "zhihu"),
        ("https://x.com/user/status/1", "x"),
        ("https://twitter.com/user/status/1", "x"),
        ("https://github.com/owner/repo", "github"),
        ("https://news.ycombinator.com/item?id=1", "hackernews"),
        ("https://en.wikipedia.org/wiki/Deduplication", "wikipedia"),
        ("https://example.com/post", "web"),
        ("https://notx.com/post", "web"),  # a suffix match is on a dot boundary
        (None, "local"),
    ],
)
def test_platform_from_host(url: str | None, platform: str) -> None:
    assert guess_platform(url) == platform


def test_check_url_errors_name_the_url() -> None:
    for bad in ["ftp://example.com/", "http:///path", "https://exa mple.com/", "http://a:x/"]:
        with pytest.raises(CaptureError) as caught:
            check_url(bad)
        one_line_naming(str(caught.value), bad)


# -- properties ---------------------------------------------------------------------------------

segment = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs")),
    min_size=1,
    max_size=8,
).filter(lambda s: s not in (".", "..") and "/" not in s and "?" not in s and "#" not in s)
param = st.tuples(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True), st.text(max_size=6))
hosts = st.sampled_from(["example.com", "a.b.cn", "mp.weixin.qq.com", "127.0.0.1"])


def _build(host: str, path: list[str], params: list[tuple[str, str]], trailing: bool) -> str:
    query = "&".join(f"{quote(k)}={quote(v, safe='')}" for k, v in params)
    text = f"https://{host}/" + "/".join(quote(p, safe="") for p in path)
    if trailing and path:
        text += "/"
    return text + (f"?{query}" if query else "")


@given(hosts, st.lists(segment, max_size=4), st.lists(param, max_size=4), st.booleans())
def test_key_ignores_tracking_scheme_slash_and_fragment(
    host: str, path: list[str], params: list[tuple[str, str]], trailing: bool
) -> None:
    kept = [(k, v) for k, v in params if not is_tracking_param(k)]
    base = url_key(_build(host, path, kept, False))
    noisy = _build(host, path, [*params, ("utm_source", "x"), ("fbclid", "y")], trailing)
    assert url_key(noisy) == base
    assert url_key(noisy.replace("https://", "http://", 1) + "#frag") == base
    assert url_key(noisy.replace(host, host.upper(), 1)) == base
    assert url_key(clean_url(noisy)) == base  # the recorded source keeps its key


@given(st.text(max_size=60))
def test_key_never_raises_and_is_stable(text: str) -> None:
    key = url_key(text)
    assert isinstance(key, str)
    assert url_key(text) == key


def test_tracking_list_is_lowercase() -> None:
    assert all(name == name.lower() for name in TRACKING_PARAMS)
    assert is_tracking_param("UTM_Campaign") and not is_tracking_param("id")
