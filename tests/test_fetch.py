import ipaddress
from collections.abc import AsyncIterator

import pytest

from bot.ingest.errors import FetchError, FetchFailure
from bot.ingest.fetch import FetchLimits, SafeFetcher, decode_body
from tests.site import Site

LOCAL = [ipaddress.ip_network("127.0.0.1/32")]


@pytest.fixture
async def fetcher() -> AsyncIterator[SafeFetcher]:
    limits = FetchLimits(timeout=1.0, max_bytes=50_000)
    async with SafeFetcher(limits, allowed_networks=LOCAL) as opened:
        yield opened


async def failure(fetcher: SafeFetcher, url: str) -> FetchError:
    with pytest.raises(FetchError) as raised:
        await fetcher.fetch(url)
    return raised.value


async def test_page_with_validators(fetcher: SafeFetcher, site: Site) -> None:
    result = await fetcher.fetch(f"{site.base_url}/pages/a.html#boss")
    assert result.status == 200 and "りゅうおう" in result.text
    assert result.url == f"{site.base_url}/pages/a.html"
    assert result.etag == '"a-v1"'
    again = await fetcher.fetch(result.url, etag=result.etag)
    assert again.not_modified


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/pages/sjis.html", "シフトJISで書かれた武器屋"),
        ("/pages/euc.html", "EUC-JPで書かれた宿屋"),
    ],
)
async def test_japanese_encodings(
    fetcher: SafeFetcher, site: Site, path: str, expected: str
) -> None:
    assert expected in (await fetcher.fetch(site.base_url + path)).text


def test_decoding_order() -> None:
    body = "<meta charset='shift_jis'><p>日本語</p>".encode("cp932")
    assert "日本語" in decode_body(body, "text/html", None)
    assert "日本語" in decode_body("日本語".encode("euc-jp"), "text/plain", "euc-jp")
    assert "日本語" in decode_body("日本語".encode("euc-jp"), "text/plain", "no-such-charset")


async def test_redirect_is_followed_and_rechecked(fetcher: SafeFetcher, site: Site) -> None:
    result = await fetcher.fetch(f"{site.base_url}/redirect")
    assert result.url == f"{site.base_url}/pages/a.html"


async def test_redirect_loop_stops(fetcher: SafeFetcher, site: Site) -> None:
    error = await failure(fetcher, f"{site.base_url}/loop")
    assert error.code is FetchFailure.REDIRECT_LIMIT and error.detail == "5"
    assert site.hits["/loop"] == 6


async def test_redirects_can_be_switched_off(site: Site) -> None:
    async with SafeFetcher(FetchLimits(follow_redirects=False), allowed_networks=LOCAL) as strict:
        error = await failure(strict, f"{site.base_url}/redirect")
    assert error.code is FetchFailure.REDIRECT_OFF and error.detail == "/pages/a.html"


@pytest.mark.parametrize(
    ("path", "code", "detail"),
    [
        ("/missing", FetchFailure.HTTP_STATUS, "404 Not Found"),
        ("/error", FetchFailure.HTTP_STATUS, "500 Internal Server Error"),
        ("/file.bin", FetchFailure.UNSUPPORTED_TYPE, "application/octet-stream"),
        ("/big", FetchFailure.TOO_LARGE, "> 50000"),
        ("/slow", FetchFailure.TIMEOUT, "1"),
    ],
)
async def test_failures_say_why(
    fetcher: SafeFetcher, site: Site, path: str, code: FetchFailure, detail: str
) -> None:
    error = await failure(fetcher, site.base_url + path)
    assert (error.code, error.detail) == (code, detail)


async def test_unreachable_port_is_a_connection_error(fetcher: SafeFetcher) -> None:
    error = await failure(fetcher, "http://127.0.0.1:9/")
    assert error.code is FetchFailure.CONNECTION


async def test_fetcher_needs_its_context() -> None:
    with pytest.raises(RuntimeError, match="async context manager"):
        await SafeFetcher().fetch("http://example.com/")
