"""`rag …` commands and questions, parsed once for Slack and the console alike."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from bot.errors import CommandError

# Slack wraps links as <https://x> or <https://x|label>; users see the plain URL.
_SLACK_LINK = re.compile(r"<((?:https?|mailto):[^>|]+)(?:\|[^>]*)?>")
_MENTION = re.compile(r"<@[A-Z0-9]+>")

USAGE = (
    "rag add <URL|path>  ·  rag crawl <URL> [regex]  ·  rag delete <URL|path>  ·  "
    "rag status  ·  rag help"
)


@dataclass(frozen=True, slots=True)
class Add:
    target: str


@dataclass(frozen=True, slots=True)
class Crawl:
    url: str
    pattern: str = ""


@dataclass(frozen=True, slots=True)
class Delete:
    target: str


@dataclass(frozen=True, slots=True)
class Status:
    pass


@dataclass(frozen=True, slots=True)
class Help:
    pass


@dataclass(frozen=True, slots=True)
class Ask:
    question: str


Command = Add | Crawl | Delete | Status | Help | Ask


def clean_slack_text(text: str) -> str:
    """Drop mentions and unwrap Slack's link markup."""
    return _SLACK_LINK.sub(r"\1", _MENTION.sub("", text)).strip()


def _split_args(text: str) -> list[str]:
    """Words, with quotes grouping a path that has spaces; backslashes stay literal so a
    regex like `\\.html$` arrives intact."""
    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace_split = True
    lexer.escape = ""
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: take the words as typed
        return text.split()


def parse(text: str) -> Command:
    """A `rag` command, or else a question.

    Raises:
        CommandError: `rag` followed by an unknown verb or the wrong arguments.
    """
    text = clean_slack_text(text)
    words = text.split(maxsplit=1)
    if not words or words[0].lower() != "rag":
        return Ask(text)
    rest = words[1] if len(words) > 1 else ""
    args = _split_args(rest)
    if not args:
        raise CommandError(f"usage: {USAGE}")
    verb, params = args[0].lower(), args[1:]
    if verb == "status" and not params:
        return Status()
    if verb == "help":
        return Help()
    if verb == "add" and len(params) == 1:
        return Add(params[0])
    if verb == "delete" and len(params) == 1:
        return Delete(params[0])
    if verb == "crawl" and len(params) in (1, 2):
        pattern = params[1] if len(params) == 2 else ""
        try:
            re.compile(pattern)
        except re.error as exc:
            raise CommandError(f"invalid regex '{pattern}': {exc}") from exc
        return Crawl(params[0], pattern)
    raise CommandError(f"usage: {USAGE}")
