import asyncio

import pytest

from bot.ingest.crawl import SiteThrottle, extract_links, is_sitemap, parse_sitemap, select_pages
from bot.ingest.errors import FetchError
from bot.ingest.fetch import SafeFetcher
from bot.ingest.robots import RobotsCache
from bot.ingest.urls import normalize_url, same_site
from tests.site import Site
from tests.test_fetch import LOCAL


@pytest.mark.parametrize(
    ("url", "normalized"),
    [
        ("HTTP://Example.COM:80/a#frag", "http://example.com/a"),
        ("https://example.com:443", "https://example.com/"),
        ("https://example.com:8443/x?q=1#y", "https://example.com:8443/x?q=1"),
        ("http://[::1]:8080/", "http://[::1]:8080/"),
    ],
)
def test_normalize_url(url: str, normalized: str) -> None:
    assert normalize_url(url) == normalized


def test_links_are_absolute_unique_and_web_only() -> None:
    html = """<a href="/a">1</a><a href="/a#x">2</a><a href="b.html">3</a>
    <a href="mailto:x@y">m</a><a href="javascript:void(0)">j</a><a href="https://other.test/z">o</a>"""
    assert extract_links(html, "http://site.test/dir/index.html") == [
        "http://site.test/a",
        "http://site.test/dir/b.html",
        "https://other.test/z",
    ]


def test_select_pages_same_site_regex_and_cap() -> None:
    index = "http://site.test/docs/"
    links = [
        "http://site.test/docs/",
        "http://site.test/docs/a.html",
        "http://www.site.test/docs/b.html",
        "http://other.test/docs/c.html",
        "http://site.test/docs/d.pdf",
        "http://site.test/docs/e.html",
    ]
    assert select_pages(index, links, r"\.html$", 10) == [
        "http://site.test/docs/a.html",
        "http://www.site.test/docs/b.html",
        "http://site.test/docs/e.html",
    ]
    assert len(select_pages(index, links, "", 2)) == 2
    assert same_site("http://www.a.test/x", "https://a.test/y")


def test_sitemaps() -> None:
    urlset = (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc> http://s.test/a </loc></url><url><loc>http://s.test/b</loc></url></urlset>"
    )
    assert parse_sitemap(urlset) == (["http://s.test/a", "http://s.test/b"], [])
    index = (
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<sitemap><loc>http://s.test/s1.xml</loc></sitemap></sitemapindex>"
    )
    assert parse_sitemap(index) == ([], ["http://s.test/s1.xml"])
    assert is_sitemap(urlset) and is_sitemap(index)
    assert not is_sitemap('<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"/>')
    with pytest.raises(ValueError, match="not valid XML"):
        parse_sitemap("<urlset>")


async def test_throttle_spaces_requests_per_host() -> None:
    now = [0.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    throttle = SiteThrottle(clock=lambda: now[0], sleep=sleep)
    await throttle.wait("http://a.test/1", 2.0)
    await throttle.wait("http://b.test/1", 2.0)  # another host: no wait
    now[0] += 0.5
    await throttle.wait("http://a.test/2", 2.0)
    assert slept == [1.5]
    await asyncio.gather(
        throttle.wait("http://c.test/1", 1.0), throttle.wait("http://c.test/2", 1.0)
    )
    assert slept == [1.5, 1.0]


async def test_robots_rules_cache_and_fail_open(site: Site) -> None:
    now = [0.0]
    cache = RobotsCache(ttl=60, clock=lambda: now[0])
    async with SafeFetcher(allowed_networks=LOCAL) as fetcher:
        rules = await cache.rules_for(f"{site.base_url}/index.html", fetcher)
        assert rules.allows(f"{site.base_url}/pages/a.html")
        assert not rules.allows(f"{site.base_url}/private/secret.html")
        assert not rules.allows(f"{site.base_url}/private-notes")  # wildcard prefix
        assert rules.crawl_delay() == 0.05
        await cache.rules_for(f"{site.base_url}/other", fetcher)
        assert site.hits["/robots.txt"] == 1  # cached within the TTL
        now[0] += 61
        site.robots_status = 500
        rules = await cache.rules_for(f"{site.base_url}/other", fetcher)
        assert site.hits["/robots.txt"] == 2
        assert rules.allows(f"{site.base_url}/private/secret.html")  # fail-open
        unreachable = await cache.rules_for("http://127.0.0.1:9/x", fetcher)
        assert unreachable.allows("http://127.0.0.1:9/x")
        with pytest.raises(FetchError, match="blocked"):
            await cache.rules_for("http://10.0.0.1/x", fetcher)  # off limits: no fail-open
