"""Typed records that cross the storage boundary."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class ChunkKind(StrEnum):
    """How a chunk was cut, which tells the answer step how to quote it."""

    PROSE = "prose"
    TABLE = "table"
    HEADING = "heading"


@dataclass(frozen=True, slots=True)
class Source:
    """A document the knowledge base holds: a web page, a local file or a corpus entry."""

    url: str
    title: str = ""
    content_hash: str = ""
    fetched_at: str = ""
    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """A chunk as the chunker cuts it, before it has an id."""

    text: str
    kind: ChunkKind = ChunkKind.PROSE
    heading_path: tuple[str, ...] = ()

    def indexed_text(self, title: str = "") -> str:
        """The text embedded and keyword-indexed: title and heading path give a chunk its
        context, so "the price" in a section named after a product can still be found."""
        context = [part for part in (title, *self.heading_path) if part]
        if not context:
            return self.text
        return " > ".join(context) + "\n" + self.text


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk read back from storage with its source."""

    id: int
    source_url: str
    source_title: str
    ordinal: int
    kind: ChunkKind
    heading_path: tuple[str, ...]
    text: str


@dataclass(frozen=True, slots=True)
class ScoredId:
    """A chunk id with one retriever's raw score (BM25: higher is better; vector: distance)."""

    chunk_id: int
    score: float


@dataclass(frozen=True, slots=True)
class Stats:
    """What `rag status` reports."""

    sources: int
    chunks: int
    chunks_by_kind: dict[str, int] = field(default_factory=dict)
    db_bytes: int = 0
    embedding_model: str = ""
    embedding_dim: int = 0
