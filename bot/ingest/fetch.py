"""The only way shiori fetches from the web: guarded, bounded, and honest about failures.

Every connection goes through `GuardedResolver` (no private, loopback, link-local…
addresses); redirects are followed by hand, at most `max_redirects` hops, each hop
re-validated; the body is streamed and cut off past `max_bytes`; only text types are taken.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import urlsplit

import aiohttp
from bs4.dammit import EncodingDetector, UnicodeDammit

from bot.ingest.errors import FetchError, FetchFailure
from bot.ingest.netguard import GuardedResolver, IPNetwork, Lookup, system_lookup
from bot.ingest.urls import normalize_url

USER_AGENT = "shiori/0.1 (+knowledge bot; respects robots.txt)"
PAGE_TYPES = frozenset(
    {"text/html", "application/xhtml+xml", "text/plain", "text/markdown", "text/x-markdown"}
)
XML_TYPES = frozenset({"application/xml", "text/xml"})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True, slots=True)
class FetchLimits:
    timeout: float = 30.0
    connect_timeout: float = 10.0
    max_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5
    follow_redirects: bool = True


@dataclass(frozen=True, slots=True)
class FetchResult:
    url: str
    status: int
    content_type: str
    text: str
    etag: str | None = None
    last_modified: str | None = None

    @property
    def not_modified(self) -> bool:
        return self.status == 304


def decode_body(body: bytes, content_type: str, header_charset: str | None) -> str:
    """HTTP header charset first, then `<meta charset>` / XML declaration, then detection
    (Shift_JIS and EUC-JP pages come out right)."""
    if header_charset:
        try:
            return body.decode(header_charset)
        except (LookupError, UnicodeDecodeError):
            pass
    is_html = "html" in content_type or "xml" in content_type
    declared = EncodingDetector.find_declared_encoding(body, is_html=is_html)
    candidates = [enc for enc in (declared, "utf-8", "cp932", "euc-jp") if enc]
    decoded = UnicodeDammit(body, candidates, is_html=is_html).unicode_markup
    return str(decoded) if decoded is not None else body.decode("utf-8", errors="replace")


class SafeFetcher:
    """An aiohttp session whose every connection is SSRF-checked. Use as `async with`."""

    def __init__(
        self,
        limits: FetchLimits = FetchLimits(),
        *,
        allowed_networks: Sequence[IPNetwork] = (),
        lookup: Lookup = system_lookup,
        user_agent: str = USER_AGENT,
    ) -> None:
        self.limits = limits
        self._resolver = GuardedResolver(allowed_networks, lookup)
        self._user_agent = user_agent
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> SafeFetcher:
        connector = aiohttp.TCPConnector(resolver=self._resolver, use_dns_cache=False)
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(
                total=self.limits.timeout, sock_connect=self.limits.connect_timeout
            ),
            headers={"User-Agent": self._user_agent},
            trust_env=False,  # a proxy from the environment would bypass the address check
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def fetch(
        self,
        url: str,
        *,
        accept: frozenset[str] = PAGE_TYPES,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> FetchResult:
        """GET `url`, following redirects safely.

        Raises:
            FetchError: refused address or scheme, timeout, HTTP error status, too large,
                unsupported content type, or too many redirects.
        """
        if self._session is None:
            raise RuntimeError("use SafeFetcher as an async context manager")
        current = normalize_url(url)
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        for _ in range(self.limits.max_redirects + 1):
            try:
                result = await self._get_once(current, accept, headers)
            except TimeoutError as exc:
                raise FetchError(FetchFailure.TIMEOUT, current, f"{self.limits.timeout:g}") from exc
            if isinstance(result, FetchResult):
                return result
            if not self.limits.follow_redirects:
                raise FetchError(FetchFailure.REDIRECT_OFF, current, result)
            current = normalize_url(result, base=current)
        raise FetchError(FetchFailure.REDIRECT_LIMIT, url, str(self.limits.max_redirects))

    async def _get_once(
        self, url: str, accept: frozenset[str], headers: dict[str, str]
    ) -> FetchResult | str:
        """A FetchResult, or the Location of a redirect."""
        assert self._session is not None
        self._resolver.check_literal(urlsplit(url).hostname or "")
        try:
            async with self._session.get(url, allow_redirects=False, headers=headers) as response:
                if response.status in REDIRECT_STATUSES:
                    location = response.headers.get("Location")
                    if not location:
                        raise FetchError(
                            FetchFailure.HTTP_STATUS, url, f"{response.status} without Location"
                        )
                    return location
                if response.status == 304:
                    return FetchResult(
                        url,
                        304,
                        "",
                        "",
                        headers.get("If-None-Match"),
                        headers.get("If-Modified-Since"),
                    )
                if response.status >= 400:
                    raise FetchError(
                        FetchFailure.HTTP_STATUS,
                        url,
                        f"{response.status} {response.reason or ''}".strip(),
                    )
                content_type = response.content_type.lower()
                if content_type not in accept:
                    raise FetchError(FetchFailure.UNSUPPORTED_TYPE, url, content_type or "unknown")
                body = await self._read_capped(response, url)
                return FetchResult(
                    url=url,
                    status=response.status,
                    content_type=content_type,
                    text=decode_body(body, content_type, response.charset),
                    etag=response.headers.get("ETag"),
                    last_modified=response.headers.get("Last-Modified"),
                )
        except FetchError:
            raise
        except aiohttp.ClientConnectorError as exc:
            cause = exc.__cause__ or exc.__context__
            if isinstance(cause, FetchError):
                raise cause from exc
            raise FetchError(FetchFailure.CONNECTION, url, str(exc.os_error or exc)) from exc
        except (aiohttp.ClientError, asyncio.IncompleteReadError) as exc:
            raise FetchError(FetchFailure.CONNECTION, url, str(exc) or type(exc).__name__) from exc

    async def _read_capped(self, response: aiohttp.ClientResponse, url: str) -> bytes:
        limit = self.limits.max_bytes
        if response.content_length is not None and response.content_length > limit:
            raise FetchError(FetchFailure.TOO_LARGE, url, f"{response.content_length} > {limit}")
        body = bytearray()
        async for piece in response.content.iter_chunked(64 * 1024):
            body.extend(piece)
            if len(body) > limit:
                raise FetchError(FetchFailure.TOO_LARGE, url, f"> {limit}")
        return bytes(body)
