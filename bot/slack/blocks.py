"""Block Kit for answers: text in sections within Slack's limits, numbered source links,
and 👍/👎 buttons that carry the stored answer's id."""

from __future__ import annotations

from typing import Any

from bot import messages
from bot.answer import Answer

SECTION_LIMIT = 3000  # characters of mrkdwn in one section block
BLOCK_LIMIT = 50  # blocks in one message
FALLBACK_LIMIT = 3900  # notification text
FEEDBACK_UP = "feedback_up"
FEEDBACK_DOWN = "feedback_down"

Block = dict[str, Any]


def split_text(text: str, limit: int = SECTION_LIMIT) -> list[str]:
    """Pieces of at most `limit` characters, cut at paragraph, then line, then space."""
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind("\n\n"), window.rfind("\n"))
        if cut < limit // 2:
            cut = window.rfind(" ")
        if cut < limit // 2:
            cut = limit
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _mrkdwn(text: str) -> str:
    """Escape Slack control characters, keeping `>` quote markers at line starts."""
    lines = []
    for line in text.split("\n"):
        quoted = line.startswith("> ")
        body = _escape(line[2:] if quoted else line)
        lines.append(("> " if quoted else "") + body)
    return "\n".join(lines)


def answer_blocks(locale: str, answer: Answer, answer_id: int | None) -> list[Block]:
    if not answer.found:
        return [_section(messages.text(locale, "not_found"))]
    blocks = [_section(piece) for piece in split_text(_mrkdwn(answer.text))]
    if answer.note:
        blocks.append(_context(messages.text(locale, answer.note)))
    if answer.citations:
        links = [
            f"[{c.number}] <{_escape(c.url)}|{_escape(c.title or c.url)}>" for c in answer.citations
        ]
        blocks.append(_context(messages.text(locale, "sources") + "  " + "  ".join(links)))
    if answer_id is not None:
        blocks.append(
            {
                "type": "actions",
                "block_id": "feedback",
                "elements": [
                    _button("👍", FEEDBACK_UP, answer_id),
                    _button("👎", FEEDBACK_DOWN, answer_id),
                ],
            }
        )
    return blocks


def chunk_blocks(blocks: list[Block]) -> list[list[Block]]:
    """Messages of at most BLOCK_LIMIT blocks each, in order."""
    return [blocks[i : i + BLOCK_LIMIT] for i in range(0, len(blocks), BLOCK_LIMIT)] or [[]]


def fallback_text(text: str) -> str:
    return text if len(text) <= FALLBACK_LIMIT else text[: FALLBACK_LIMIT - 1] + "…"


def _section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def _button(label: str, action_id: str, answer_id: int) -> Block:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": label, "emoji": True},
        "action_id": action_id,
        "value": str(answer_id),
    }
