"""Text → chunks, by content type (pure functions, no I/O).

A document is first cut into heading sections (each chunk keeps its parent-heading path),
then each section into table blocks and prose blocks. Tables are cut between rows and every
piece repeats the header row; prose is cut at paragraphs, then sentences (Japanese and English
ends), then words or characters, with an overlap that starts on a boundary, never mid-word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from storage.records import ChunkDraft, ChunkKind

_MARKDOWN_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_HTML_HEADING = re.compile(r"^\s*<h([1-6])\b[^>]*>(.*?)</h\1>\s*$", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# A sentence ends at 。！？ (any spacing) or at .!? followed by white space.
_SENTENCE = re.compile(r".+?(?:[。！？!?]+[」』）)]*\s*|[.!?]+[\"')\]]*(?:\s+|$)|\n+|$)", re.DOTALL)
_MARKDOWN_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
# Overlap starts after a sentence end if the window holds one, else a clause mark, else a space.
_BOUNDARIES = (
    re.compile(r"[。！？!?\n]\s*|[.][\"')\]]*\s+"),
    re.compile(r"[、，,;；:：]\s*"),
    re.compile(r"\s+"),
)
MIN_TABLE_COLUMNS = 3


class ContentType(StrEnum):
    PROSE = "prose"
    TABLE = "table"
    MIXED = "mixed"


@dataclass(frozen=True, slots=True)
class Block:
    """A run of lines that is either all table or all prose."""

    is_table: bool
    text: str


def _is_pipe_row(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("|") and stripped.endswith("|") and stripped.count("|") >= 3


def _is_tab_row(line: str) -> bool:
    return line.count("\t") >= MIN_TABLE_COLUMNS - 1 and bool(line.strip())


def split_blocks(text: str) -> list[Block]:
    """Cut text into table and prose blocks.

    A table is a Markdown pipe table with its `|---|` separator, or at least two consecutive
    lines of three or more tab-separated columns. Runs of spaces never make columns: prose
    aligned with spaces is still prose.
    """
    lines = text.split("\n")
    blocks: list[Block] = []
    prose: list[str] = []
    i = 0
    while i < len(lines):
        end = _table_end(lines, i)
        if end > i:
            if prose:
                blocks.append(Block(False, "\n".join(prose)))
                prose = []
            blocks.append(Block(True, "\n".join(lines[i:end])))
            i = end
        else:
            prose.append(lines[i])
            i += 1
    if prose:
        blocks.append(Block(False, "\n".join(prose)))
    return [block for block in blocks if block.text.strip()]


def _table_end(lines: list[str], start: int) -> int:
    """Index after the table starting at `start`, or `start` when none starts there."""
    if _is_pipe_row(lines[start]) and start + 1 < len(lines):
        if _MARKDOWN_SEPARATOR.match(lines[start + 1]):
            end = start + 2
            while end < len(lines) and _is_pipe_row(lines[end]):
                end += 1
            return end
        return start
    end = start
    while end < len(lines) and _is_tab_row(lines[end]):
        end += 1
    return end if end - start >= 2 else start


def detect_content_type(text: str) -> ContentType:
    """PROSE, TABLE (nothing but tables) or MIXED."""
    blocks = split_blocks(text)
    tables = [block for block in blocks if block.is_table]
    if not tables:
        return ContentType.PROSE
    return ContentType.TABLE if len(tables) == len(blocks) else ContentType.MIXED


def chunk_table(text: str, chunk_size: int) -> list[str]:
    """Rows grouped up to `chunk_size` characters; each group starts with the header.

    A row is never split, even when it alone is longer than `chunk_size`: half a row
    separated from its header answers nothing.
    """
    lines = [line for line in text.split("\n") if line.strip()]
    if not lines:
        return []
    header_lines = (
        lines[:2] if len(lines) > 1 and _MARKDOWN_SEPARATOR.match(lines[1]) else lines[:1]
    )
    header = "\n".join(header_lines)
    rows = lines[len(header_lines) :]
    if not rows:
        return [header]
    chunks: list[str] = []
    current: list[str] = []
    size = len(header)
    for row in rows:
        if current and size + 1 + len(row) > chunk_size:
            chunks.append("\n".join([header, *current]))
            current, size = [], len(header)
        current.append(row)
        size += 1 + len(row)
    chunks.append("\n".join([header, *current]))
    return chunks


def _sentences(paragraph: str) -> list[str]:
    return [match.group(0) for match in _SENTENCE.finditer(paragraph) if match.group(0).strip()]


def _hard_split(text: str, limit: int) -> list[str]:
    """Split an over-long sentence at white space, or every `limit` characters for
    scripts written without spaces."""
    pieces: list[str] = []
    while len(text) > limit:
        cut = text.rfind(" ", 0, limit + 1)
        cut = cut + 1 if cut > limit // 2 else limit
        pieces.append(text[:cut])
        text = text[cut:]
    if text.strip():
        pieces.append(text)
    return pieces


def _units(text: str, limit: int) -> list[tuple[str, bool]]:
    """(piece, starts_paragraph) pairs, each no longer than `limit`."""
    units: list[tuple[str, bool]] = []
    for paragraph in _PARAGRAPH_BREAK.split(text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        pieces = [paragraph] if len(paragraph) <= limit else _split_paragraph(paragraph, limit)
        units.extend((piece, index == 0) for index, piece in enumerate(pieces))
    return units


def _split_paragraph(paragraph: str, limit: int) -> list[str]:
    pieces: list[str] = []
    for sentence in _sentences(paragraph):
        pieces.extend([sentence] if len(sentence) <= limit else _hard_split(sentence, limit))
    return pieces


def _overlap_tail(previous: str, overlap: int) -> str:
    """The end of `previous`, at most `overlap` characters, starting on a boundary.

    The first sentence, clause or word boundary inside the window is used; a window inside
    one long Latin word gives no overlap rather than half a word.
    """
    if overlap <= 0 or not previous:
        return ""
    window = previous[-overlap:]
    if len(window) == len(previous):
        return previous
    for boundary in _BOUNDARIES:
        match = boundary.search(window)
        if match and match.end() < len(window):
            return window[match.end() :]
    if window.isascii():
        return ""
    return window


def chunk_text(text: str, chunk_size: int = 500, chunk_overlap: int = 50) -> list[str]:
    """Prose → chunks of at most `chunk_size` characters with `chunk_overlap` overlap.

    Split order: paragraph → sentence → word/character. Pieces of one paragraph are joined
    as they stood; paragraphs are joined by a blank line.
    """
    if chunk_overlap >= chunk_size:
        raise ValueError("chunk_overlap must be smaller than chunk_size")
    text = text.strip()
    if not text:
        return []
    if len(text) <= chunk_size:
        return [text]
    chunks: list[str] = []
    current = ""
    for piece, starts_paragraph in _units(text, chunk_size - chunk_overlap):
        joiner = "\n\n" if starts_paragraph else ""
        if current and len(current) + len(joiner) + len(piece.rstrip()) > chunk_size:
            chunks.append(current.strip())
            tail = _overlap_tail(chunks[-1], chunk_overlap).strip()
            current = tail + (" " if tail and tail.isascii() else "") if tail else ""
            joiner = ""
        current = current + joiner + piece if current else piece
    if current.strip():
        chunks.append(current.strip())
    return chunks


def _parse_heading(line: str) -> tuple[int, str] | None:
    match = _MARKDOWN_HEADING.match(line)
    if match:
        return len(match.group(1)), match.group(2).strip()
    match = _HTML_HEADING.match(line)
    if match:
        return int(match.group(1)), _TAG.sub("", match.group(2)).strip()
    return None


@dataclass(frozen=True, slots=True)
class Section:
    """Body text under a heading path (empty path: text before the first heading)."""

    heading_path: tuple[str, ...]
    body: str


def split_sections(text: str) -> list[Section]:
    """Cut at Markdown (`#`…`######`) and HTML (`<h1>`…`<h6>`) headings, tracking parents."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    in_fence = False

    def flush() -> None:
        if "\n".join(body).strip():
            sections.append(Section(tuple(title for _, title in stack), "\n".join(body)))
        body.clear()

    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else _parse_heading(line)
        if heading is None:
            body.append(line)
            continue
        flush()
        level, title = heading
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
    flush()
    return sections


def chunk_document(text: str, chunk_size: int = 500, chunk_overlap: int = 50) -> list[ChunkDraft]:
    """The full chunking of one document: sections, then table and prose blocks."""
    drafts: list[ChunkDraft] = []
    for section in split_sections(text):
        prose_kind = ChunkKind.HEADING if section.heading_path else ChunkKind.PROSE
        for block in split_blocks(section.body):
            if block.is_table:
                pieces, kind = chunk_table(block.text, chunk_size), ChunkKind.TABLE
            else:
                pieces, kind = chunk_text(block.text, chunk_size, chunk_overlap), prose_kind
            drafts.extend(ChunkDraft(piece, kind, section.heading_path) for piece in pieces)
    return drafts
