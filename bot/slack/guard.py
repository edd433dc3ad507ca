"""Who may do what, and how often: admin check, per-user question rate, concurrency cap."""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable

from bot.commands import Add, Command, Crawl, Delete

ADMIN_COMMANDS = (Add, Crawl, Delete)
WINDOW_SECONDS = 60.0


def needs_admin(command: Command) -> bool:
    return isinstance(command, ADMIN_COMMANDS)


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
