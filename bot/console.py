"""The bot in a terminal: the same commands and answers as in Slack, plus local files.

Interactive on a terminal; when standard input is a pipe or file, one command per line, so
sessions can be scripted.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from bot.answer import Turn
from bot.assistant import Assistant
from bot.commands import parse
from bot.errors import CommandError
from bot.ingest.pipeline import EventKind, ProgressEvent
from bot.messages import failure_cause
from bot.services import Services

PROMPT = "shiori> "
MARKS = {"stored": "✓", "unchanged": "=", "failed": "✗"}
HISTORY_TURNS = 6


class Console:
    def __init__(self, services: Services, out: TextIO = sys.stdout) -> None:
        self._assistant = Assistant(services, allow_local_files=True)
        self._out = out
        self._locale = services.settings.locale
        self._history: list[Turn] = []
        self._done = self._total = 0

    def _progress(self, event: ProgressEvent) -> None:
        """One line per finished page: `[done/total] ✓ url (chunks)`."""
        if event.kind is EventKind.PLANNED:
            self._total = event.total
            return
        if event.kind is EventKind.STARTED:
            return
        self._done += 1
        counter = f"{self._done}/{self._total}" if self._total else str(self._done)
        if event.failure is not None:
            detail = failure_cause(self._locale, event.failure)
        else:
            detail = f"({event.chunks})" if event.chunks else ""
        line = f"  [{counter}] {MARKS[event.kind.value]} {event.url} {detail}".rstrip()
        print(line, file=self._out, flush=True)

    def _notify(self, message: str) -> None:
        print(message, file=self._out, flush=True)

    async def handle(self, line: str) -> str:
        """Reply to one line of input."""
        try:
            command = parse(line)
        except CommandError as exc:
            return str(exc)
        self._done = self._total = 0
        reply = await self._assistant.handle(
            command,
            history=self._history[-HISTORY_TURNS:],
            progress=self._progress,
            notify=self._notify,
        )
        self._history += [Turn("user", line), Turn("assistant", reply)]
        return reply

    async def run(self, stream: TextIO = sys.stdin) -> None:
        interactive = stream.isatty()
        if interactive:
            print("shiori console — rag help for commands, Ctrl-D to quit", file=self._out)
        while True:
            if interactive:
                line = await asyncio.to_thread(input, PROMPT)
            else:
                line = await asyncio.to_thread(stream.readline)
                if not line:
                    break
            if not line.strip() or line.strip().startswith("#"):
                continue
            if line.strip() in {"exit", "quit"}:
                break
            print(await self.handle(line.strip()), file=self._out, flush=True)
