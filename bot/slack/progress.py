"""Live crawl progress in a thread: one message, edited in place at most every `interval`
seconds (Slack rate-limits `chat.update`), then the completion summary below it."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.ingest.pipeline import EventKind, ProgressEvent

logger = logging.getLogger(__name__)


class CrawlProgress:
    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str,
        locale: str,
        interval: float,
    ) -> None:
        self._client = client
        self._channel = channel
        self._thread_ts = thread_ts
        self._locale = locale
        self._interval = interval
        self._message_ts: str | None = None
        self._total = self._done = self._chunks = self._errors = 0
        self._current = ""
        self._dirty = False
        self._pump: asyncio.Task[None] | None = None

    def _text(self) -> str:
        return messages.text(
            self._locale,
            "crawl_progress",
            done=self._done,
            total=self._total,
            chunks=self._chunks,
            errors=self._errors,
            url=self._current or "-",
        )

    async def start(self) -> None:
        response = await self._client.chat_postMessage(
            channel=self._channel, thread_ts=self._thread_ts, text=self._text()
        )
        self._message_ts = str(response["ts"])
        self._pump = asyncio.create_task(self._run())

    def on_event(self, event: ProgressEvent) -> None:
        """Progress callback of the ingest service (runs on the event loop)."""
        if event.kind is EventKind.PLANNED:
            self._total = event.total
        elif event.kind is EventKind.STARTED:
            self._current = event.url
        else:
            self._done += 1
            self._chunks += event.chunks
            self._errors += event.kind is EventKind.FAILED
        self._dirty = True

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self._flush()

    async def _flush(self) -> None:
        if not self._dirty or self._message_ts is None:
            return
        self._dirty = False
        try:
            await self._client.chat_update(
                channel=self._channel, ts=self._message_ts, text=self._text()
            )
        except SlackApiError as exc:  # a missed edit is not worth failing a crawl for
            logger.warning("progress update failed: %s", exc.response.get("error"))

    async def finish(self, summary: str) -> None:
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
        self._current = ""
        self._dirty = True
        await self._flush()
        await self._client.chat_postMessage(
            channel=self._channel, thread_ts=self._thread_ts, text=summary
        )
