"""Web ingestion: `rag add <URL>` and `rag crawl <URL> [regex]` (seed 002 RAGKnowledgeService).

Each page: URL safety check → robots.txt → per-site delay → guarded fetch (conditional when
the page is stored already) → extraction → the shared ingest pipeline. A page's failure is
recorded with its cause and the crawl goes on; a cancelled crawl stores nothing half-way,
because each page is written in one transaction.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from bot.errors import IngestError
from bot.ingest.crawl import SiteThrottle, extract_links, is_sitemap, parse_sitemap, select_pages
from bot.ingest.errors import FetchError, FetchFailure
from bot.ingest.extract import extract_html
from bot.ingest.fetch import PAGE_TYPES, XML_TYPES, FetchLimits, FetchResult, SafeFetcher
from bot.ingest.netguard import IPNetwork, Lookup, parse_networks, system_lookup
from bot.ingest.pipeline import (
    Document,
    EventKind,
    Ingestor,
    IngestSummary,
    ProgressCallback,
    ProgressEvent,
)
from bot.ingest.robots import RobotsCache
from bot.ingest.safety import SafeBrowsingChecker
from bot.ingest.urls import normalize_url
from config.settings import Settings
from storage.knowledge_base import KnowledgeBase

MAX_NESTED_SITEMAPS = 10


@dataclass(frozen=True, slots=True)
class WebConfig:
    limits: FetchLimits = field(default_factory=FetchLimits)
    max_pages: int = 50
    crawl_delay: float = 1.0
    respect_robots: bool = True
    robots_ttl: float = 3600.0
    allowed_networks: tuple[IPNetwork, ...] = ()
    concurrency: int = 4

    @classmethod
    def from_settings(cls, settings: Settings) -> WebConfig:
        return cls(
            limits=FetchLimits(
                timeout=settings.rag_fetch_timeout,
                max_bytes=settings.rag_max_page_bytes,
                follow_redirects=settings.rag_follow_redirects,
            ),
            max_pages=settings.rag_max_crawl_pages,
            crawl_delay=settings.rag_crawl_delay_sec,
            respect_robots=settings.rag_respect_robots_txt,
            robots_ttl=settings.rag_robots_txt_cache_ttl,
            allowed_networks=tuple(parse_networks(settings.allowed_networks)),
            concurrency=settings.rag_crawl_concurrency,
        )


@dataclass(frozen=True, slots=True)
class CrawlReport:
    index_url: str
    planned: int
    summary: IngestSummary


class WebIngestService:
    def __init__(
        self,
        ingestor: Ingestor,
        kb: KnowledgeBase,
        config: WebConfig,
        *,
        safety: SafeBrowsingChecker | None = None,
        lookup: Lookup = system_lookup,
    ) -> None:
        self._ingestor = ingestor
        self._kb = kb
        self.config = config
        self._safety = safety
        self._lookup = lookup
        self._robots = RobotsCache(config.robots_ttl)
        self._throttle = SiteThrottle()

    def _fetcher(self) -> SafeFetcher:
        return SafeFetcher(
            self.config.limits, allowed_networks=self.config.allowed_networks, lookup=self._lookup
        )

    async def _fetch_politely(
        self,
        url: str,
        fetcher: SafeFetcher,
        accept: frozenset[str] = PAGE_TYPES,
        conditional: bool = False,
    ) -> FetchResult:
        """Safety check, robots.txt, per-site delay, then the guarded fetch."""
        if self._safety is not None:
            await self._safety.check(url)
        delay = self.config.crawl_delay
        if self.config.respect_robots:
            rules = await self._robots.rules_for(url, fetcher)
            if not rules.allows(url):
                raise FetchError(FetchFailure.ROBOTS, url)
            delay = max(delay, rules.crawl_delay() or 0.0)
        await self._throttle.wait(url, delay)
        stored = self._kb.source(url) if conditional else None
        return await fetcher.fetch(
            url,
            accept=accept,
            etag=stored.etag if stored else None,
            last_modified=stored.last_modified if stored else None,
        )

    async def _page(self, url: str, fetcher: SafeFetcher) -> Document | None:
        """The page as a document, or None when the server says it has not changed."""
        result = await self._fetch_politely(url, fetcher, conditional=True)
        if result.not_modified:
            return None
        if "html" in result.content_type:
            page = extract_html(result.text)
            title, text = page.title, page.text
        else:
            title, text = "", result.text
        if not text.strip():
            raise FetchError(FetchFailure.EMPTY, url)
        # Stored under the URL it was finally served from, so a redirect and its target
        # are one source.
        return Document(result.url, title or result.url, text, result.etag, result.last_modified)

    async def _ingest_one(
        self, url: str, fetcher: SafeFetcher, report: ProgressCallback, seen: set[str]
    ) -> None:
        """Fetch and store one page; `seen` holds the final URLs already taken this run."""
        report(ProgressEvent(EventKind.STARTED, url))
        try:
            document = await self._page(url, fetcher)
            if document is None or document.url in seen:
                report(ProgressEvent(EventKind.UNCHANGED, url))
                return
            seen.add(document.url)
            event = await self._ingestor.ingest(document)
        except IngestError as exc:
            report(ProgressEvent(EventKind.FAILED, url, failure=exc))
            return
        report(event)

    async def ingest_page(
        self, url: str, progress: ProgressCallback | None = None
    ) -> ProgressEvent:
        """`rag add <URL>`: one page. Raises `IngestError` with the cause on failure."""
        url = normalize_url(url)
        events: list[ProgressEvent] = []

        def report(event: ProgressEvent) -> None:
            events.append(event)
            if progress is not None:
                progress(event)

        async with self._fetcher() as fetcher:
            await self._ingest_one(url, fetcher, report, set())
        final = events[-1]
        if final.failure is not None:
            raise final.failure
        return final

    async def plan(self, index_url: str, pattern: str, fetcher: SafeFetcher) -> list[str]:
        """The pages a crawl of `index_url` will visit: its links, or a sitemap's URLs."""
        index = await self._fetch_politely(index_url, fetcher, accept=PAGE_TYPES | XML_TYPES)
        if is_sitemap(index.text):
            links = await self._sitemap_urls(index, fetcher)
        else:
            links = extract_links(index.text, index.url)
        return select_pages(index_url, links, pattern, self.config.max_pages)

    async def _sitemap_urls(self, index: FetchResult, fetcher: SafeFetcher) -> list[str]:
        try:
            pages, nested = parse_sitemap(index.text)
            for sitemap in nested[:MAX_NESTED_SITEMAPS]:
                result = await self._fetch_politely(
                    normalize_url(sitemap), fetcher, accept=XML_TYPES | PAGE_TYPES
                )
                pages += parse_sitemap(result.text)[0]
        except ValueError as exc:
            raise FetchError(FetchFailure.UNSUPPORTED_TYPE, index.url, str(exc)) from exc
        urls = []
        for page in pages:
            try:
                urls.append(normalize_url(page))
            except FetchError:
                continue
        return list(dict.fromkeys(urls))

    async def ingest_from_index(
        self, index_url: str, pattern: str = "", progress: ProgressCallback | None = None
    ) -> CrawlReport:
        """`rag crawl <URL> [regex]`. Raises `IngestError` only when the index itself fails;
        page failures are in the report."""
        index_url = normalize_url(index_url)
        summary = IngestSummary()

        def report(event: ProgressEvent) -> None:
            summary.record(event)
            if progress is not None:
                progress(event)

        async with self._fetcher() as fetcher:
            pages = await self.plan(index_url, pattern, fetcher)
            report(ProgressEvent(EventKind.PLANNED, index_url, total=len(pages)))
            gate = asyncio.Semaphore(self.config.concurrency)
            seen: set[str] = set()

            async def visit(url: str) -> None:
                async with gate:
                    await self._ingest_one(url, fetcher, report, seen)

            await asyncio.gather(*(visit(url) for url in pages))
        return CrawlReport(index_url, len(pages), summary)


def build_web_ingest(
    settings: Settings, ingestor: Ingestor, kb: KnowledgeBase, lookup: Lookup = system_lookup
) -> WebIngestService:
    safety = None
    if settings.rag_url_safety_check:
        safety = SafeBrowsingChecker(
            settings.google_safe_browsing_api_key,
            api_url=settings.rag_url_safety_api_url,
            cache_ttl=settings.rag_url_safety_cache_ttl,
            timeout=settings.rag_url_safety_timeout,
            fail_open=settings.rag_url_safety_fail_open,
        )
    return WebIngestService(
        ingestor, kb, WebConfig.from_settings(settings), safety=safety, lookup=lookup
    )
