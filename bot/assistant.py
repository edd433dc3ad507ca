"""What a command does, independent of where it was typed (console or Slack).

Each method returns the reply text; the caller only decides where it goes. Errors a user can
cause become `ShioriError`s with a message fit to show.
"""

from __future__ import annotations

import logging
from pathlib import Path

from bot import messages
from bot.answer import Turn
from bot.commands import USAGE, Add, Ask, Command, Crawl, Delete, Help, Status
from bot.errors import ShioriError
from bot.ingest.local import read_path
from bot.ingest.pipeline import ProgressCallback
from bot.services import Services

logger = logging.getLogger(__name__)


def _is_web_url(target: str) -> bool:
    return target.lower().startswith(("http://", "https://"))


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
    ) -> str:
        try:
            return await self._dispatch(command, history, progress)
        except ShioriError as exc:
            return self._text("error", cause=str(exc))

    async def _dispatch(
        self, command: Command, history: list[Turn] | None, progress: ProgressCallback | None
    ) -> str:
        match command:
            case Ask(question):
                return await self.ask(question, history)
            case Status():
                return messages.status(self._locale, self._services.kb.stats())
            case Help():
                return self._text("help", usage=USAGE)
            case Delete(target):
                return self.delete(target)
            case Add(target):
                return await self.add(target, progress)
            case Crawl():
                return self._text("web_later")
        raise ShioriError(f"unknown command: {command}")

    async def ask(self, question: str, history: list[Turn] | None = None) -> str:
        if not question.strip():
            return self._text("help", usage=USAGE)
        result = await self._services.engine.search(question)
        answer = await self._services.answerer.answer(question, result.hits, history)
        logger.info("answered in %s", {k: round(v, 1) for k, v in result.timings_ms.items()})
        return messages.answer(self._locale, answer)

    def _source_key(self, target: str) -> str:
        """Local paths are stored under their `file://` URI."""
        if self._allow_local_files and not _is_web_url(target):
            path = Path(target).expanduser()
            if path.exists():
                return path.resolve().as_uri()
        return target

    def delete(self, target: str) -> str:
        url = self._source_key(target)
        removed = self._services.kb.delete_source(url)
        if removed is None:
            return self._text("not_stored", url=url)
        return self._text("deleted", url=url, chunks=removed)

    async def add(self, target: str, progress: ProgressCallback | None) -> str:
        if _is_web_url(target):
            return self._text("web_later")
        if not self._allow_local_files:
            raise ShioriError("only http(s) URLs can be added here")
        path = Path(target).expanduser()
        documents = list(read_path(path))
        summary = await self._services.ingestor.ingest_many(documents, progress=progress)
        if len(documents) == 1 and path.is_file():
            url = documents[0].url
            if summary.failures:
                return self._text("ingest_failed", url=url, cause=summary.failures[url])
            if summary.unchanged:
                return self._text("unchanged", url=url)
            return self._text("added", url=url, chunks=summary.chunks)
        return messages.ingest_summary(self._locale, summary)
