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
from bot.ingest.pipeline import ProgressEvent
from bot.services import Services

PROMPT = "shiori> "
MARKS = {"stored": "✓", "unchanged": "=", "failed": "✗"}
HISTORY_TURNS = 6


class Console:
    def __init__(self, services: Services, out: TextIO = sys.stdout) -> None:
        self._assistant = Assistant(services, allow_local_files=True)
        self._out = out
        self._history: list[Turn] = []
        self._done = 0

    def _progress(self, event: ProgressEvent) -> None:
        self._done += 1
        detail = f"({event.chunks})" if event.chunks else event.error
        print(f"  [{self._done}] {MARKS[event.kind.value]} {event.url} {detail}", file=self._out)

    async def handle(self, line: str) -> str:
        """Reply to one line of input."""
        try:
            command = parse(line)
        except CommandError as exc:
            return str(exc)
        self._done = 0
        reply = await self._assistant.handle(
            command, history=self._history[-HISTORY_TURNS:], progress=self._progress
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
