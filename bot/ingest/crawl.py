"""Which pages a crawl visits, and when: links of an index page or a sitemap, same site
only, optionally filtered by a regex, de-duplicated, capped; one request at a time per site
with the larger of the configured and the robots.txt delay between them."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from xml.etree import ElementTree

from bs4 import BeautifulSoup

from bot.ingest.errors import FetchError
from bot.ingest.urls import host_of, normalize_url, same_site

_SITEMAP_NS = re.compile(r"^\{[^}]*\}")


def extract_links(html: str, base_url: str) -> list[str]:
    """Every http(s) link of the page, absolute and normalized, in page order, once each."""
    soup = BeautifulSoup(html, "html.parser")
    base_tag = soup.find("base", href=True)
    base = normalize_url(str(base_tag["href"]), base=base_url) if base_tag else base_url
    links: dict[str, None] = {}
    for anchor in soup.find_all("a", href=True):
        try:
            links.setdefault(normalize_url(str(anchor["href"]), base=base), None)
        except FetchError:
            continue  # mailto:, javascript:, malformed
    return list(links)


def is_sitemap(text: str) -> bool:
    """Judged by content: XHTML index pages are XML too, and sitemaps are not always *.xml."""
    head = text.lstrip()[:2000]
    return "<urlset" in head or "<sitemapindex" in head


def parse_sitemap(text: str) -> tuple[list[str], list[str]]:
    """(page URLs, nested sitemap URLs) of a sitemap or sitemap index.

    Raises:
        ValueError: not well-formed XML.
    """
    try:
        root = ElementTree.fromstring(text.encode("utf-8"))
    except ElementTree.ParseError as exc:
        raise ValueError(f"sitemap is not valid XML: {exc}") from exc
    kind = _SITEMAP_NS.sub("", root.tag)
    locations = [
        (element.text or "").strip()
        for element in root.iter()
        if _SITEMAP_NS.sub("", element.tag) == "loc" and (element.text or "").strip()
    ]
    return ([], locations) if kind == "sitemapindex" else (locations, [])


def select_pages(index_url: str, links: list[str], pattern: str, limit: int) -> list[str]:
    """Same-site links matching `pattern` (searched anywhere in the URL), at most `limit`."""
    matcher = re.compile(pattern) if pattern else None
    chosen: list[str] = []
    for link in links:
        if link == index_url or not same_site(link, index_url):
            continue
        if matcher is not None and not matcher.search(link):
            continue
        chosen.append(link)
        if len(chosen) >= limit:
            break
    return chosen


class SiteThrottle:
    """Spaces requests to the same host `delay` seconds apart; different hosts run freely."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        self._clock = clock
        self._sleep = sleep or asyncio.sleep
        self._locks: dict[str, asyncio.Lock] = {}
        self._last: dict[str, float] = {}

    async def wait(self, url: str, delay: float) -> None:
        host = host_of(url)
        lock = self._locks.setdefault(host, asyncio.Lock())
        async with lock:
            last = self._last.get(host)
            if last is not None:
                remaining = last + delay - self._clock()
                if remaining > 0:
                    await self._sleep(remaining)
            self._last[host] = self._clock()
