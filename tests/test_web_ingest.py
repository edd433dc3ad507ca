import asyncio
import dataclasses
import io
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from bot.console import Console
from bot.errors import IngestError
from bot.ingest.errors import FetchError, FetchFailure
from bot.ingest.pipeline import EventKind, ProgressEvent
from bot.ingest.safety import SafeBrowsingChecker
from bot.services import Services, build_services
from config.settings import Settings, load_settings
from tests.fakes import HashingEmbedder
from tests.servers import serve
from tests.site import Site


@pytest.fixture
async def services(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Services]:
    monkeypatch.setenv("RAG_FETCH_ALLOWED_NETWORKS", "127.0.0.1")
    monkeypatch.setenv("RAG_CRAWL_DELAY_SEC", "0.01")
    monkeypatch.setenv("RAG_FETCH_TIMEOUT", "1")
    monkeypatch.setenv("RAG_MAX_PAGE_BYTES", "50000")
    local = load_settings(None, shiori_db_path=settings.shiori_db_path)
    built = await build_services(local, embedder=HashingEmbedder())
    yield built
    built.close()


async def test_crawl_stores_allowed_pages_once_and_reports_failures(
    services: Services, site: Site
) -> None:
    events: list[ProgressEvent] = []
    report = await services.web.ingest_from_index(f"{site.base_url}/index.html", "", events.append)
    base = site.base_url
    stored = set(services.kb.source_urls())
    assert stored == {
        f"{base}/pages/a.html",
        f"{base}/pages/sjis.html",
        f"{base}/pages/euc.html",
        f"{base}/notes.txt",
    }
    assert report.planned == 10  # anchors merged; external, mailto and javascript skipped
    assert events[0].kind is EventKind.PLANNED and events[0].total == 10
    causes = {
        url: error.code
        for url, error in report.summary.failures.items()
        if isinstance(error, FetchError)
    }
    assert causes == {
        f"{base}/private/secret.html": FetchFailure.ROBOTS,
        f"{base}/missing": FetchFailure.HTTP_STATUS,
        f"{base}/error": FetchFailure.HTTP_STATUS,
        f"{base}/file.bin": FetchFailure.UNSUPPORTED_TYPE,
        f"{base}/big": FetchFailure.TOO_LARGE,
    }
    assert site.hits["/private/secret.html"] == 0  # robots.txt was obeyed
    assert site.hits["/pages/a.html"] == 2  # once itself, once behind /redirect
    assert (report.summary.stored, report.summary.unchanged) == (4, 1)  # the redirect is a.html
    hits = services.kb.search_keyword("武器屋", 5)
    assert services.kb.chunks([hits[0].chunk_id])[0].source_url == f"{base}/pages/sjis.html"


async def test_recrawl_uses_conditional_requests(services: Services, site: Site) -> None:
    url = f"{site.base_url}/pages/a.html"
    first = await services.web.ingest_page(url)
    assert first.kind is EventKind.STORED and first.chunks >= 2
    second = await services.web.ingest_page(url + "#boss")
    assert second.kind is EventKind.UNCHANGED  # the server answered 304
    assert services.kb.stats().sources == 1


async def test_sitemap_crawl(services: Services, site: Site) -> None:
    report = await services.web.ingest_from_index(f"{site.base_url}/sitemap.xml")
    assert report.planned == 3
    assert report.summary.stored == 2
    [(_, failure)] = report.summary.failures.items()
    assert isinstance(failure, FetchError) and failure.code is FetchFailure.ROBOTS


async def test_regex_filter_and_page_cap(services: Services, site: Site) -> None:
    report = await services.web.ingest_from_index(f"{site.base_url}/index.html", r"/pages/")
    assert report.planned == 3 and report.summary.stored == 3
    services.web.config = dataclasses.replace(services.web.config, max_pages=2)
    capped = await services.web.ingest_from_index(f"{site.base_url}/index.html")
    assert capped.planned == 2


async def test_crawl_waits_between_requests_to_a_site(
    services: Services, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[float] = []
    original = services.web._throttle.wait

    async def record(url: str, delay: float) -> None:
        waits.append(delay)
        await original(url, delay)

    monkeypatch.setattr(services.web._throttle, "wait", record)
    await services.web.ingest_from_index(f"{site.base_url}/index.html", r"/pages/")
    assert waits and all(delay == 0.05 for delay in waits)  # robots Crawl-delay beats 0.01


async def test_cancelled_crawl_leaves_no_half_stored_page(services: Services, site: Site) -> None:
    site.slow_seconds = 0.5
    task = asyncio.create_task(services.web.ingest_from_index(f"{site.base_url}/index.html"))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    db = services.kb._writer
    orphans = db.execute(
        "SELECT count(*) FROM sources WHERE id NOT IN (SELECT source_id FROM chunks)"
    ).fetchall()[0][0]
    assert orphans == 0
    counts = [
        db.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        for table in ("chunks", "chunks_fts", "chunks_trigram", "chunk_vectors")
    ]
    assert len(set(counts)) == 1


async def test_add_page_errors_carry_url_and_cause(services: Services, site: Site) -> None:
    with pytest.raises(FetchError) as missing:
        await services.web.ingest_page(f"{site.base_url}/missing")
    assert missing.value.code is FetchFailure.HTTP_STATUS
    with pytest.raises(IngestError):
        await services.web.ingest_page("http://10.0.0.1/")


async def test_console_add_and_crawl_messages(services: Services, site: Site) -> None:
    out = io.StringIO()
    console = Console(services, out)
    added = await console.handle(f"rag add {site.base_url}/pages/a.html")
    assert added == f"ページを取り込みました: {site.base_url}/pages/a.html (2チャンク)"
    failed = await console.handle(f"rag add {site.base_url}/missing")
    assert failed == (
        "エラー: ページの取り込みに失敗しました。\n"
        f"     URL: {site.base_url}/missing\n     原因: HTTP 404 Not Found"
    )
    summary = await console.handle(f"rag crawl {site.base_url}/index.html")
    assert out.getvalue().count("クロールを開始しました... (リンク収集中)") == 1
    assert "[10/10]" in out.getvalue()
    # a.html is unchanged (304) and /redirect leads to it: 3 new pages, 3 chunks
    assert summary.splitlines()[0] == "└─ 完了: 5ページ / 3チャンク / エラー: 5件"
    assert (
        f"✗ {site.base_url}/private/secret.html\n       原因: robots.txt でクロールが禁止されています"
        in summary
    )
    timeout = await console.handle(f"rag add {site.base_url}/slow")
    assert "原因: 接続がタイムアウトしました (1秒)" in timeout


@pytest.fixture
async def safe_browsing() -> AsyncIterator[tuple[list[dict[str, object]], str]]:
    requests: list[dict[str, object]] = []

    async def find(request: web.Request) -> web.Response:
        body = await request.json()
        requests.append(body)
        url = body["threatInfo"]["threatEntries"][0]["url"]
        if "down" in url:
            return web.Response(status=503)
        matches = [{"threatType": "MALWARE", "threat": {"url": url}}] if "evil" in url else []
        return web.json_response({"matches": matches} if matches else {})

    app = web.Application()
    app.router.add_post("/v4/threatMatches:find", find)
    async with serve(app) as base_url:
        yield requests, f"{base_url}/v4/threatMatches:find"


async def test_safe_browsing_cache_and_failure_modes(
    safe_browsing: tuple[list[dict[str, object]], str],
) -> None:
    requests, api_url = safe_browsing
    checker = SafeBrowsingChecker("key", api_url=api_url, cache_ttl=60)
    await checker.check("http://fine.test/")
    await checker.check("http://fine.test/")
    assert len(requests) == 1
    with pytest.raises(FetchError) as unsafe:
        await checker.check("http://evil.test/")
    assert unsafe.value.code is FetchFailure.UNSAFE and unsafe.value.detail == "MALWARE"
    await checker.check("http://down.test/")  # fail-open by default
    closed = SafeBrowsingChecker("key", api_url=api_url, fail_open=False)
    with pytest.raises(FetchError, match="safety check unavailable"):
        await closed.check("http://down.test/")
