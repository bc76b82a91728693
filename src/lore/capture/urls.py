"""URLs: the dedupe key of a page, a clean source address, and the platform a host belongs to.

Two addresses of the same page should give the same key: the scheme (http/https), the case
of the host, a default port, a trailing slash, a fragment, the order of the query parameters,
percent-encoding differences and tracking parameters (utm_*, fbclid, spm, ...) do not count.
Pure functions, no I/O.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from ..errors import CaptureError

# Query parameters that say how a link was shared, never which page it is.
TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "ttclid",
        "igshid",
        "igsh",
        "mc_cid",
        "mc_eid",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "ref_src",
        "ref_url",
        "spm",
        "spm_id_from",
        "scm",
        "vd_source",
        "share_source",
        "share_medium",
        "share_plat",
        "share_session_id",
        "share_tag",
        "share_from",
        "sharer_sharetime",
        "sharer_shareid",
        "sharer_shareinfo",
        "sharer_shareinfo_first",
        "unique_k",
        "timestamp",
        "from",
        "from_source",
        "from_spmid",
        "scene",
        "srcid",
        "chksm",
        "clicktime",
        "enterid",
        "exportkey",
        "pass_ticket",
        "ascene",
        "devicetype",
        "nettype",
        "wx_header",
        "isappinstalled",
        "xsec_token",
        "xsec_source",
        "app_platform",
        "app_version",
        "author_share",
        "xhsshare",
        "appuid",
        "apptime",
        "shareredid",
        "utm_id",
    }
)
_TRACKING_PREFIXES = ("utm_", "pk_", "hmsr", "hmpl", "hmcu", "hmkw", "hmci")
_DEFAULT_PORTS = {"http": 80, "https": 443}
# Characters that stay literal in a normalised path and query (RFC 3986 unreserved + sub-delims).
_PATH_SAFE = "/:@!$&'()*+,;=-._~"

# host suffix → platform name; the first match wins, so list subdomains before domains.
PLATFORMS: tuple[tuple[str, str], ...] = (
    ("mp.weixin.qq.com", "wechat"),
    ("weixin.qq.com", "wechat"),
    ("xiaohongshu.com", "xiaohongshu"),
    ("xhslink.com", "xiaohongshu"),
    ("bilibili.com", "bilibili"),
    ("b23.tv", "bilibili"),
    ("douyin.com", "douyin"),
    ("iesdouyin.com", "douyin"),
    ("zhihu.com", "zhihu"),
    ("weibo.com", "weibo"),
    ("weibo.cn", "weibo"),
    ("x.com", "x"),
    ("twitter.com", "x"),
    ("youtube.com", "youtube"),
    ("youtu.be", "youtube"),
    ("github.com", "github"),
    ("medium.com", "medium"),
    ("substack.com", "substack"),
    ("juejin.cn", "juejin"),
    ("csdn.net", "csdn"),
    ("jianshu.com", "jianshu"),
    ("douban.com", "douban"),
    ("toutiao.com", "toutiao"),
    ("36kr.com", "36kr"),
    ("sspai.com", "sspai"),
    ("news.ycombinator.com", "hackernews"),
    ("reddit.com", "reddit"),
    ("arxiv.org", "arxiv"),
    ("wikipedia.org", "wikipedia"),
)

_URL_LIKE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def looks_like_url(text: str) -> bool:
    return bool(_URL_LIKE.match(text.strip()))


def is_tracking_param(name: str) -> bool:
    key = name.lower()
    return key in TRACKING_PARAMS or key.startswith(_TRACKING_PREFIXES)


def check_url(url: str) -> str:
    """The URL stripped of surrounding space if lore can fetch it; else CaptureError."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise CaptureError(f"{url}: not a valid URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise CaptureError(
            f"{url}: only http and https URLs can be fetched",
            hint="pass a local file as a path, not a file:// URL",
        )
    if not parts.hostname:
        raise CaptureError(f"{url}: the URL has no host")
    if any(ch.isspace() for ch in text):
        raise CaptureError(f"{url}: a URL cannot contain spaces", hint="quote or encode it")
    return text


def _host(parts_host: str) -> str:
    host = parts_host.lower().rstrip(".")
    try:
        return host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        return host


def _quote_part(text: str) -> str:
    return quote(unquote(text), safe=_PATH_SAFE)


def _clean_query(query: str) -> list[tuple[str, str]]:
    pairs = parse_qsl(query, keep_blank_values=True)
    return [(k, v) for k, v in pairs if not is_tracking_param(k)]


def clean_url(url: str) -> str:
    """The address to record as a note's source: tracking parameters and the fragment
    dropped, everything else as given (scheme, order of parameters, trailing slash)."""
    parts = urlsplit(url.strip())
    if not parts.query and not parts.fragment:
        return urlunsplit(parts)
    kept = [
        piece
        for piece in parts.query.split("&")
        if piece and not is_tracking_param(unquote(piece.split("=", 1)[0].replace("+", " ")))
    ]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "&".join(kept), ""))


def url_key(url: str) -> str:
    """The dedupe key of a URL: same page ⇔ same key (see the module docstring).

    Never raises: text that is not an http(s) URL is its own key (stripped), so a front
    matter `source` that is a file name or free text still compares with itself."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return text
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return text
    host = _host(parts.hostname)
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    path = _quote_part(parts.path).rstrip("/")
    query = urlencode(sorted(_clean_query(parts.query)), quote_via=quote, safe=_PATH_SAFE)
    return f"{host}{path}" + (f"?{query}" if query else "")


def guess_platform(url: str | None) -> str:
    """The platform a URL's host belongs to ("wechat", "zhihu", ...); "web" for others."""
    if not url:
        return "local"
    try:
        host = _host(urlsplit(url.strip()).hostname or "")
    except ValueError:
        return "web"
    if not host:
        return "local"
    for suffix, name in PLATFORMS:
        if host == suffix or host.endswith("." + suffix):
            return name
    return "web"
