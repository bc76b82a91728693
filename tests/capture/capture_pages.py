"""A real HTTP server on 127.0.0.1 serving real-world-shaped pages for the capture tests.

Routes:
  /article            an article inside navigation, ads, comments and a footer (UTF-8)
  /zh/gbk             a Chinese page in GBK, charset only in <meta>, none in the header
  /zh/header-latin1   GBK bytes, header says ISO-8859-1, meta says gb2312 (meta wins)
  /old-article        301 → /article?utm_source=newsletter&fbclid=abc
  /loop               redirects to itself forever
  /missing            404
  /huge               20 MB page with a Content-Length header
  /huge-chunked       20 MB page streamed without Content-Length
  /hang               headers and the first bytes, then nothing until the test ends
  /report.pdf         application/pdf
  /spa                a page whose text is built by JavaScript (nothing to extract)
  /notes.md           text/markdown with front matter
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARTICLE_TEXT = [
    "Customer deduplication is the practice of merging records that describe the same "
    "person. Our team settled on one rule: the same phone number and the same email address "
    "mean the same customer.",
    "Names are ambiguous and addresses change, but the pair of phone and email is stable "
    "across years of records. We measured a false merge rate below one in ten thousand.",
    "The rule became version two of the policy in October, replacing the name-based rule.",
]
ARTICLE_NOISE = [
    "Subscribe to our newsletter",
    "BUY CHEAP WIDGETS NOW",
    "Great post! Visit my casino site",
    "All rights reserved",
    "Related: Ten gadgets you need",
]
ARTICLE = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Dedupe rules explained | Example Engineering Blog</title>
<meta property="og:title" content="Dedupe rules explained">
<meta name="author" content="Li Wei">
<meta property="article:published_time" content="2026-09-03T08:00:00Z">
<link rel="stylesheet" href="/style.css"><script>window.dataLayer=[];</script>
</head><body>
<header><nav class="menu"><ul><li><a href="/">Home</a></li><li><a href="/blog">Blog</a></li>
<li><a href="/about">About</a></li><li><a href="/subscribe">{ARTICLE_NOISE[0]}</a></li></ul></nav>
</header>
<aside class="ad-banner"><div class="advertisement"><a href="https://ads.example.net/c?id=9">
{ARTICLE_NOISE[1]}</a></div></aside>
<main><article class="post">
<h1>Dedupe rules explained</h1>
<p class="byline">By Li Wei · 3 September 2026</p>
<p>{ARTICLE_TEXT[0]}</p>
<h2>Why phone and email</h2>
<p>{ARTICLE_TEXT[1]}</p>
<ul><li>Normalise phone numbers to E.164 first.</li><li>Lower-case email addresses.</li></ul>
<p>{ARTICLE_TEXT[2]}</p>
</article></main>
<section id="comments" class="comments"><h3>3 Comments</h3>
<div class="comment"><p class="comment-body">{ARTICLE_NOISE[2]}</p></div>
<div class="comment"><p class="comment-body">First!</p></div></section>
<aside class="related"><h3>Related posts</h3><ul><li><a href="/g">{ARTICLE_NOISE[4]}</a></li></ul>
</aside>
<footer><p>© 2026 Example Engineering Blog. {ARTICLE_NOISE[3]}.</p></footer>
</body></html>
"""

ZH_TEXT = [
    "我们在十月决定：同一个手机号加同一个邮箱，视为同一个客户。这条规则取代了之前只看姓名的做法，"
    "因为姓名重复太多，误合并率很高。",
    "第二版规则还要求先把手机号统一成国际格式，再把邮箱转成小写，然后再比较。",
    "结论：客户去重规则 v2 在十月上线，误合并率降到万分之一以下。",
]
ZH_NOISE = ["首页", "登录", "沙发！楼主说得对", "版权所有"]
ZH_PAGE = f"""<!DOCTYPE html>
<html><head>
<meta http-equiv="X-UA-Compatible" content="IE=edge">
<meta charset="gbk">
<title>客户去重规则 v2 - 数据治理专栏</title>
</head><body>
<div id="topnav"><a href="/">{ZH_NOISE[0]}</a> | <a href="/hot">热榜</a> |
<a href="/login">{ZH_NOISE[1]}</a></div>
<div class="content"><article>
<h1>客户去重规则 v2</h1>
<p>{ZH_TEXT[0]}</p>
<p>{ZH_TEXT[1]}</p>
<p>{ZH_TEXT[2]}</p>
</article></div>
<div class="comment-list"><div class="comment">{ZH_NOISE[2]}</div></div>
<div class="footer">{ZH_NOISE[3]} 2026 数据治理专栏</div>
</body></html>
"""
# A character GBK has and GB2312 lacks (鎔), so a GB2312 decoder would fail on the page.
ZH_GBK_ONLY = "镕"

SPA = """<!DOCTYPE html><html><head><title>App</title></head><body><div id="root"></div>
<script src="/bundle.js"></script></body></html>"""

MARKDOWN = """---
title: Notes from the scraper
author: Scraper Bot
---
# Notes from the scraper

Markdown served as text/markdown keeps its own front matter and headings.
"""

HUGE_BYTES = 20 * 1024 * 1024
_FILLER = b"<p>" + b"filler text " * 80 + b"</p>\n"


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that hangs up early (size cap, timeout) is part of the tests


class PageServer:
    def __init__(self) -> None:
        self.release = threading.Event()
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def _send(self, status: int, body: bytes, content_type: str, **headers: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name.replace("_", "-"), value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                server.requests.append(self.path)
                path = self.path.split("?", 1)[0]
                try:
                    self.route(path)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (size cap, timeout): expected here

            def route(self, path: str) -> None:
                if path == "/article":
                    self._send(200, ARTICLE.encode(), "text/html; charset=utf-8")
                elif path == "/zh/gbk":
                    body = ZH_PAGE.replace("</article>", f"<p>{ZH_GBK_ONLY}基金</p></article>")
                    self._send(200, body.encode("gbk"), "text/html")
                elif path == "/zh/header-latin1":
                    body = ZH_PAGE.replace('charset="gbk"', 'charset="gb2312"').encode("gbk")
                    self._send(200, body, "text/html; charset=ISO-8859-1")
                elif path == "/old-article":
                    target = "/article?utm_source=newsletter&fbclid=abc"
                    self._send(301, b"", "text/html", Location=target)
                elif path == "/loop":
                    self._send(302, b"", "text/html", Location="/loop")
                elif path == "/missing":
                    self._send(404, b"<h1>Not Found</h1>", "text/html")
                elif path == "/huge":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(HUGE_BYTES))
                    self.end_headers()
                    self._stream(HUGE_BYTES)
                elif path == "/huge-chunked":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.close_connection = True
                    self._stream(HUGE_BYTES)
                elif path == "/hang":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    self.wfile.write(b"<html><body><p>The start of a page that never ")
                    self.wfile.flush()
                    server.release.wait(30)
                elif path == "/report.pdf":
                    self._send(200, b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "application/pdf")
                elif path == "/spa":
                    self._send(200, SPA.encode(), "text/html; charset=utf-8")
                elif path == "/notes.md":
                    self._send(200, MARKDOWN.encode(), "text/markdown; charset=utf-8")
                else:
                    self._send(404, b"not found", "text/plain")

            def _stream(self, total: int) -> None:
                self.wfile.write(b"<html><body>")
                sent = 12
                while sent < total:
                    chunk = _FILLER[: total - sent]
                    self.wfile.write(chunk)
                    sent += len(chunk)

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return self.base + path

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
