"""Who may do what, and how often: admin check, per-user question rate, concurrency cap."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict, deque
from collections.abc import Callable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.commands import Add, Command, Crawl, Delete

logger = logging.getLogger(__name__)

ADMIN_COMMANDS = (Add, Crawl, Delete)
WINDOW_SECONDS = 60.0


def needs_admin(command: Command) -> bool:
    return isinstance(command, ADMIN_COMMANDS)


class AdminDirectory:
    """Admins are listed user IDs plus, optionally, the members of one Slack user group
    (looked up through the Web API and cached for `ttl` seconds)."""

    def __init__(
        self,
        user_ids: frozenset[str],
        usergroup: str = "",
        ttl: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._user_ids = user_ids
        self._usergroup = usergroup
        self._ttl = ttl
        self._clock = clock
        self._members: frozenset[str] = frozenset()
        self._fetched_at: float | None = None
        self._refresh = asyncio.Lock()  # one look-up when many messages arrive at once

    async def is_admin(self, user: str, client: AsyncWebClient) -> bool:
        if user in self._user_ids:
            return True
        if not self._usergroup:
            return False
        async with self._refresh:
            now = self._clock()
            if self._fetched_at is None or now - self._fetched_at >= self._ttl:
                try:
                    response = await client.usergroups_users_list(usergroup=self._usergroup)
                    self._members = frozenset(response.get("users", []))
                    self._fetched_at = now
                except SlackApiError as exc:
                    logger.warning("admin user group unavailable: %s", exc.response.get("error"))
        return user in self._members


class RateLimiter:
    """At most `limit` questions per user in any 60-second window."""

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._limit = limit
        self._clock = clock
        self._times: dict[str, deque[float]] = defaultdict(deque)

    def retry_after(self, user: str) -> float:
        """0 when `user` may ask now (and counts the question), else seconds to wait."""
        now = self._clock()
        times = self._times[user]
        while times and now - times[0] >= WINDOW_SECONDS:
            times.popleft()
        if len(times) >= self._limit:
            return WINDOW_SECONDS - (now - times[0])
        times.append(now)
        return 0.0


class ConcurrencyCap:
    """Answers worked on at once; a question over the cap is turned away, not queued."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self.active = 0

    def try_enter(self) -> bool:
        if self.active >= self._limit:
            return False
        self.active += 1
        return True

    def leave(self) -> None:
        self.active = max(0, self.active - 1)
