"""robots.txt: Google-style rules (wildcards, Allow/Disallow precedence) via protego, a
per-site cache with TTL, and fail-open when the file cannot be fetched (seed AC71-75)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from protego import Protego

from bot.ingest.errors import FetchError, FetchFailure
from bot.ingest.fetch import SafeFetcher

logger = logging.getLogger(__name__)

ROBOTS_AGENT = "shiori"
ROBOTS_TYPES = frozenset({"text/plain"})


@dataclass(frozen=True, slots=True)
class RobotsRules:
    parser: Protego | None  # None: no usable robots.txt, everything allowed

    def allows(self, url: str) -> bool:
        return self.parser is None or bool(self.parser.can_fetch(url, ROBOTS_AGENT))

    def crawl_delay(self) -> float | None:
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(ROBOTS_AGENT)
        return float(delay) if delay is not None else None


class RobotsCache:
    """robots.txt per scheme+host, fetched through the guarded fetcher, kept `ttl` seconds."""

    def __init__(self, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._cache: dict[str, tuple[float, RobotsRules]] = {}
        self.fetches = 0

    async def rules_for(self, url: str, fetcher: SafeFetcher) -> RobotsRules:
        parts = urlsplit(url)
        site = f"{parts.scheme}://{parts.netloc}"
        cached = self._cache.get(site)
        if cached is not None and self._clock() - cached[0] < self._ttl:
            return cached[1]
        rules = await self._load(site, fetcher)
        self._cache[site] = (self._clock(), rules)
        return rules

    async def _load(self, site: str, fetcher: SafeFetcher) -> RobotsRules:
        self.fetches += 1
        try:
            result = await fetcher.fetch(f"{site}/robots.txt", accept=ROBOTS_TYPES)
        except FetchError as exc:
            if exc.code is FetchFailure.BLOCKED:
                raise  # the site itself is off limits: nothing to open up
            # 404 means "no rules"; any other failure fails open too, as the seed specifies.
            if "404" not in exc.detail:
                logger.warning("robots.txt of %s unavailable (%s): crawling allowed", site, exc)
            return RobotsRules(None)
        return RobotsRules(Protego.parse(result.text))
