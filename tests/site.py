"""A small website on 127.0.0.1 for ingestion tests: pages in three encodings, robots.txt,
a sitemap, redirects, and every failure a crawl meets."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field

from aiohttp import web

PAGE_A = """<html><head><title>モンスター図鑑</title></head><body>
<header>サイトヘッダー</header><nav><a href="/index.html">ホーム</a></nav>
<article><h1>モンスター図鑑</h1><p>ボスの一覧です。</p>
<h2>ボス</h2>
<table><tr><th>名前</th><th>HP</th></tr><tr><td>りゅうおう</td><td>200</td></tr>
<tr><td>ゾーマ</td><td>500</td></tr></table>
</article><footer>フッター</footer></body></html>"""
PAGE_SJIS = (
    "<html><head><meta charset='Shift_JIS'><title>シフトJIS</title></head>"
    "<body><p>これはシフトJISで書かれた武器屋のページです。</p></body></html>"
)
PAGE_EUC = (
    "<html><head><title>EUC</title></head>"
    "<body><p>これはEUC-JPで書かれた宿屋のページです。</p></body></html>"
)
INDEX = """<html><body><h1>Index</h1>
<a href="/pages/a.html">A</a> <a href="/pages/a.html#boss">A again</a>
<a href="pages/sjis.html">SJIS</a> <a href="/pages/euc.html">EUC</a>
<a href="/private/secret.html">secret</a> <a href="/redirect">moved</a>
<a href="/missing">404</a> <a href="/error">500</a> <a href="/file.bin">binary</a>
<a href="/big">big</a> <a href="http://other.example/page">external</a>
<a href="mailto:a@example.com">mail</a> <a href="javascript:void(0)">js</a>
<a href="/notes.txt">notes</a>
</body></html>"""
ROBOTS = "User-agent: *\nDisallow: /private*\nCrawl-delay: 0.05\n"


@dataclass
class Site:
    hits: Counter[str] = field(default_factory=Counter)
    slow_seconds: float = 3.0
    big_bytes: int = 200_000
    robots_status: int = 200
    base_url: str = ""

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._count])
        routes = {
            "/index.html": self._html(INDEX),
            "/pages/a.html": self._page_a,
            "/pages/sjis.html": self._sjis,
            "/pages/euc.html": self._euc,
            "/private/secret.html": self._html("<p>secret</p>"),
            "/redirect": self._redirect("/pages/a.html"),
            "/redirect-private": self._redirect("http://10.0.0.1/admin"),
            "/loop": self._redirect("/loop"),
            "/missing": self._status(404),
            "/error": self._status(500),
            "/file.bin": self._binary,
            "/big": self._big,
            "/slow": self._slow,
            "/notes.txt": self._text,
            "/robots.txt": self._robots,
            "/sitemap.xml": self._sitemap,
        }
        for path, handler in routes.items():
            app.router.add_get(path, handler)
        return app

    @web.middleware
    async def _count(self, request: web.Request, handler):  # type: ignore[no-untyped-def]
        self.hits[request.path] += 1
        return await handler(request)

    @staticmethod
    def _html(body: str):  # type: ignore[no-untyped-def]
        async def handler(request: web.Request) -> web.Response:
            return web.Response(text=body, content_type="text/html")

        return handler

    @staticmethod
    def _redirect(location: str):  # type: ignore[no-untyped-def]
        async def handler(request: web.Request) -> web.Response:
            raise web.HTTPFound(location)

        return handler

    @staticmethod
    def _status(status: int):  # type: ignore[no-untyped-def]
        async def handler(request: web.Request) -> web.Response:
            return web.Response(status=status, text="no")

        return handler

    async def _page_a(self, request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"a-v1"':
            return web.Response(status=304)
        return web.Response(text=PAGE_A, content_type="text/html", headers={"ETag": '"a-v1"'})

    async def _sjis(self, request: web.Request) -> web.Response:
        # No charset in the header: the <meta charset> must be honoured.
        return web.Response(body=PAGE_SJIS.encode("cp932"), content_type="text/html")

    async def _euc(self, request: web.Request) -> web.Response:
        return web.Response(
            body=PAGE_EUC.encode("euc-jp"), headers={"Content-Type": "text/html; charset=EUC-JP"}
        )

    async def _binary(self, request: web.Request) -> web.Response:
        return web.Response(body=b"\x00\x01" * 10, content_type="application/octet-stream")

    async def _big(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        for _ in range(self.big_bytes // 1000):
            await response.write(b"<p>" + b"x" * 993 + b"</p>\n")
        await response.write_eof()
        return response

    async def _slow(self, request: web.Request) -> web.Response:
        await asyncio.sleep(self.slow_seconds)
        return web.Response(text="<p>late</p>", content_type="text/html")

    async def _text(self, request: web.Request) -> web.Response:
        return web.Response(
            text="# Notes\n\nPlain text notes about the inn.", content_type="text/plain"
        )

    async def _robots(self, request: web.Request) -> web.Response:
        if self.robots_status != 200:
            return web.Response(status=self.robots_status)
        return web.Response(text=ROBOTS, content_type="text/plain")

    async def _sitemap(self, request: web.Request) -> web.Response:
        urls = "".join(
            f"<url><loc>{self.base_url}{path}</loc></url>"
            for path in ("/pages/a.html", "/pages/euc.html", "/private/secret.html")
        )
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        )
        return web.Response(text=body, content_type="application/xml")
