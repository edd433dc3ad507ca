"""What a command does, independent of where it was typed (console or Slack).

Each method returns the reply text; the caller only decides where it goes. Errors a user can
cause become `ShioriError`s with a message fit to show.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from bot import messages
from bot.answer import Answer, Turn
from bot.commands import USAGE, Add, Ask, Command, Crawl, Delete, Help, Status
from bot.errors import IngestError, ShioriError
from bot.ingest.local import read_path
from bot.ingest.pipeline import EventKind, ProgressCallback
from bot.services import Services

logger = logging.getLogger(__name__)

Notify = Callable[[str], None]


def _ignore(message: str) -> None:
    return None


def _is_url(target: str) -> bool:
    """Anything with a scheme goes to the web fetcher, which refuses all but http(s)."""
    return "://" in target or target.lower().startswith(("javascript:", "data:", "mailto:"))


class Assistant:
    def __init__(self, services: Services, *, allow_local_files: bool) -> None:
        """`allow_local_files` is True only for the console: Slack users must never make the
        bot read files from its own disk."""
        self._services = services
        self._locale = services.settings.locale
        self._allow_local_files = allow_local_files

    def _text(self, key: str, **values: object) -> str:
        return messages.text(self._locale, key, **values)

    async def handle(
        self,
        command: Command,
        *,
        history: list[Turn] | None = None,
        progress: ProgressCallback | None = None,
        notify: Notify | None = None,
    ) -> str:
        """The final reply to `command`; `notify` receives interim messages (crawl start),
        `progress` every page's event."""
        try:
            return await self._dispatch(command, history, progress, notify or _ignore)
        except ShioriError as exc:
            return self._text("error", cause=messages.failure_cause(self._locale, exc))

    async def _dispatch(
        self,
        command: Command,
        history: list[Turn] | None,
        progress: ProgressCallback | None,
        notify: Notify,
    ) -> str:
        match command:
            case Ask(question):
                return await self.ask(question, history)
            case Status():
                return self.status()
            case Help():
                return self._text("help", usage=USAGE)
            case Delete(target):
                return await self.delete(target)
            case Add(target) if _is_url(target):
                return await self.add_url(target, progress)
            case Add(target):
                return await self.add_local(target, progress)
            case Crawl(url, pattern):
                notify(self._text("crawl_started"))
                return await self.crawl(url, pattern, progress)
        raise ShioriError(f"unknown command: {command}")

    async def answer(self, question: str, history: list[Turn] | None = None) -> Answer:
        """Search, then answer from the hits (the pipeline every question goes through)."""
        result = await self._services.engine.search(question)
        answer = await self._services.answerer.answer(question, result.hits, history)
        logger.info("answered in %s", {k: round(v, 1) for k, v in result.timings_ms.items()})
        return answer

    async def ask(self, question: str, history: list[Turn] | None = None) -> str:
        if not question.strip():
            return self._text("help", usage=USAGE)
        return messages.answer(self._locale, await self.answer(question, history))

    def status(self) -> str:
        kb = self._services.kb
        return messages.status(self._locale, kb.stats(), kb.feedback_counts())

    def _source_key(self, target: str) -> str:
        """Local paths are stored under their `file://` URI."""
        if self._allow_local_files and not _is_url(target):
            path = Path(target).expanduser()
            if path.exists():
                return path.resolve().as_uri()
        return target

    async def delete(self, target: str) -> str:
        url = self._source_key(target)
        kb = self._services.kb
        removed = await asyncio.to_thread(kb.delete_source, url)
        if removed is None:
            return self._text("not_stored", url=url)
        await asyncio.to_thread(kb.compact_keyword_index)
        return self._text("deleted", url=url, chunks=removed)

    async def add_url(self, url: str, progress: ProgressCallback | None) -> str:
        try:
            event = await self._services.web.ingest_page(url, progress)
        except IngestError as exc:
            cause = messages.failure_cause(self._locale, exc)
            return self._text("ingest_failed", url=url, cause=cause)
        if event.kind is EventKind.UNCHANGED:
            return self._text("unchanged", url=event.url)
        return self._text("added", url=event.url, chunks=event.chunks)

    async def crawl(self, url: str, pattern: str, progress: ProgressCallback | None) -> str:
        try:
            report = await self._services.web.ingest_from_index(url, pattern, progress)
        except IngestError as exc:
            cause = messages.failure_cause(self._locale, exc)
            return self._text("crawl_failed", url=url, cause=cause)
        return messages.ingest_summary(self._locale, report.summary)

    async def add_local(self, target: str, progress: ProgressCallback | None) -> str:
        if not self._allow_local_files:
            raise ShioriError("only http(s) URLs can be added here")
        path = Path(target).expanduser()
        documents = list(read_path(path))
        summary = await self._services.ingestor.ingest_many(documents, progress=progress)
        if len(documents) == 1 and path.is_file():
            url = documents[0].url
            if summary.failures:
                cause = messages.failure_cause(self._locale, summary.failures[url])
                return self._text("ingest_failed", url=url, cause=cause)
            if summary.unchanged:
                return self._text("unchanged", url=url)
            return self._text("added", url=url, chunks=summary.chunks)
        return messages.ingest_summary(self._locale, summary)
