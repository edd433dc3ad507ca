"""URL safety check against Google Safe Browsing v4 (Lookup API), cached, with a timeout,
failing open or closed as configured (seed 002)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import aiohttp

from bot.ingest.errors import FetchError, FetchFailure

logger = logging.getLogger(__name__)

SAFE_BROWSING_URL = "https://safebrowsing.googleapis.com/v4/threatMatches:find"
THREAT_TYPES = [
    "MALWARE",
    "SOCIAL_ENGINEERING",
    "UNWANTED_SOFTWARE",
    "POTENTIALLY_HARMFUL_APPLICATION",
]


class SafeBrowsingChecker:
    def __init__(
        self,
        api_key: str,
        *,
        api_url: str = SAFE_BROWSING_URL,
        cache_ttl: float = 300.0,
        timeout: float = 5.0,
        fail_open: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._api_key = api_key
        self._api_url = api_url
        self._ttl = cache_ttl
        self._timeout = timeout
        self._fail_open = fail_open
        self._clock = clock
        self._cache: dict[str, tuple[float, list[str]]] = {}

    async def check(self, url: str) -> None:
        """Return if `url` is not listed as unsafe.

        Raises:
            FetchError: listed as a threat, or (fail-closed) the check was not possible.
        """
        cached = self._cache.get(url)
        if cached is not None and self._clock() - cached[0] < self._ttl:
            threats = cached[1]
        else:
            try:
                threats = await self._lookup(url)
            except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                if self._fail_open:
                    logger.warning("Safe Browsing unavailable (%s); allowing %s", exc, url)
                    return
                raise FetchError(
                    FetchFailure.UNSAFE, url, f"safety check unavailable: {exc}"
                ) from exc
            self._cache[url] = (self._clock(), threats)
        if threats:
            raise FetchError(FetchFailure.UNSAFE, url, ", ".join(sorted(set(threats))))

    async def _lookup(self, url: str) -> list[str]:
        body = {
            "client": {"clientId": "shiori", "clientVersion": "0.1"},
            "threatInfo": {
                "threatTypes": THREAT_TYPES,
                "platformTypes": ["ANY_PLATFORM"],
                "threatEntryTypes": ["URL"],
                "threatEntries": [{"url": url}],
            },
        }
        timeout = aiohttp.ClientTimeout(total=self._timeout)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.post(self._api_url, params={"key": self._api_key}, json=body) as response,
        ):
            if response.status != 200:
                raise ValueError(f"HTTP {response.status}")
            payload = await response.json()
        return [str(match.get("threatType", "THREAT")) for match in payload.get("matches", [])]
