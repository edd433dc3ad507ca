"""The knowledge base: one SQLite file, one writer connection, one reader per thread.

Synchronous by design; async callers use `asyncio.to_thread`. Every change to a source is a
single transaction, so readers (other threads, other processes) see the old chunks or the new
ones, never a mix, and a crash mid-ingest loses at most the source being written.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import apsw
import numpy as np

from storage import conversations, keyword, meta, migrations, vectors
from storage.db import connect
from storage.records import ChunkDraft, ChunkKind, ScoredId, Source, Stats, StoredChunk
from storage.tokenizer import normalize, tokenize


def _text(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True, slots=True)
class IndexedChunk:
    """A stored chunk with the text its embedding was computed from (for re-indexing)."""

    id: int
    indexed_text: str


class KnowledgeBase:
    """Sources, chunks, keyword index, vectors and graph tables in one file."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._writer = connect(self.path)
        keyword.register(self._writer)
        migrations.apply(self._writer)
        self._write_lock = threading.RLock()
        self._readers = threading.local()
        self._all_readers: list[apsw.Connection] = []
        self._vector_index = vectors.VectorIndex()
        self._frequencies = keyword.ChunkFrequencies()

    # -- connections -------------------------------------------------------------------

    def _reader(self) -> apsw.Connection:
        """A connection for this thread; in-memory files have only the writer to read."""
        if self.path == ":memory:":
            return self._writer
        reader = getattr(self._readers, "connection", None)
        if reader is None:
            reader = connect(self.path)
            keyword.register(reader)
            self._readers.connection = reader
            self._all_readers.append(reader)
        return reader

    def close(self) -> None:
        for reader in self._all_readers:
            reader.close()
        self._all_readers.clear()
        self._writer.close()

    # -- embedding facts ---------------------------------------------------------------

    def bind_embedding(self, model: str, dim: int) -> None:
        """Record `model`/`dim` for a new file, or check them against an existing one."""
        with self._write_lock, self._writer:
            if not meta.check_embedding(self._writer, model, dim):
                meta.record_embedding(self._writer, model, dim)
            vectors.create_table(self._writer, dim)

    def embedding_model(self) -> tuple[str, int]:
        db = self._reader()
        return meta.get(db, meta.MODEL_KEY) or "", int(meta.get(db, meta.DIM_KEY) or 0)

    # -- writes ------------------------------------------------------------------------

    def source(self, url: str) -> Source | None:
        rows = (
            self._reader()
            .execute(
                "SELECT url, title, content_hash, fetched_at, etag, last_modified "
                "FROM sources WHERE url = ?",
                (url,),
            )
            .fetchall()
        )
        if not rows:
            return None
        url_, title, digest, fetched_at, etag, last_modified = rows[0]
        return Source(
            str(url_), str(title), str(digest), str(fetched_at), _text(etag), _text(last_modified)
        )

    def replace_source(
        self, source: Source, chunks: list[ChunkDraft], embeddings: vectors.Matrix
    ) -> int:
        """Store `source` with exactly `chunks`, replacing whatever it had, atomically."""
        if len(chunks) != len(embeddings):
            raise ValueError(f"{len(chunks)} chunks but {len(embeddings)} embeddings")
        fetched_at = source.fetched_at or datetime.now(UTC).isoformat(timespec="seconds")
        with self._write_lock, self._writer:
            db = self._writer
            deleted = self._delete_chunks(db, source.url)
            db.execute(
                "INSERT INTO sources(url, title, fetched_at, content_hash, etag, last_modified) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(url) DO UPDATE SET "
                "title = excluded.title, fetched_at = excluded.fetched_at, "
                "content_hash = excluded.content_hash, etag = excluded.etag, "
                "last_modified = excluded.last_modified",
                (
                    source.url,
                    source.title,
                    fetched_at,
                    source.content_hash,
                    source.etag,
                    source.last_modified,
                ),
            )
            source_id = db.execute("SELECT id FROM sources WHERE url = ?", (source.url,)).fetchall()
            chunk_ids = []
            for ordinal, chunk in enumerate(chunks):
                db.execute(
                    "INSERT INTO chunks(source_id, ordinal, kind, heading_path, text) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (
                        source_id[0][0],
                        ordinal,
                        chunk.kind.value,
                        json.dumps(list(chunk.heading_path), ensure_ascii=False),
                        chunk.text,
                    ),
                )
                chunk_id = db.last_insert_rowid()
                chunk_ids.append(chunk_id)
                indexed = chunk.indexed_text(source.title)
                db.execute(
                    "INSERT INTO chunks_fts(rowid, tokens) VALUES (?, ?)",
                    (chunk_id, " ".join(tokenize(indexed))),
                )
                db.execute(
                    "INSERT INTO chunks_trigram(rowid, text) VALUES (?, ?)",
                    (chunk_id, normalize(indexed)),
                )
            if chunk_ids:
                vectors.insert(db, chunk_ids, np.asarray(embeddings, dtype=np.float32))
            meta.add(db, meta.KEYWORD_WRITES_KEY, deleted + len(chunk_ids))
        return len(chunk_ids)

    def delete_source(self, url: str) -> int | None:
        """Remove `url` and its chunks; returns the number of chunks, None if unknown."""
        with self._write_lock, self._writer:
            if not self._writer.execute("SELECT 1 FROM sources WHERE url = ?", (url,)).fetchall():
                return None
            removed = self._delete_chunks(self._writer, url)
            self._writer.execute("DELETE FROM sources WHERE url = ?", (url,))
            meta.add(self._writer, meta.KEYWORD_WRITES_KEY, removed)
        return removed

    def compact_keyword_index(self, force: bool = False) -> bool:
        """Merge the keyword indexes' segments once enough chunk rows were written.

        Ingestion calls it when a job ends rather than after each page: later pages of
        the same crawl would only scatter the index again. It runs in short steps, each
        its own transaction, so other writes (answers, feedback) wait a fraction of a
        second, not the whole ~20 s it takes at 100k chunks. Returns whether it ran.
        """
        db = self._writer
        with self._write_lock:
            written = int(meta.get(db, meta.KEYWORD_WRITES_KEY) or 0)
            chunks = int(str(db.execute("SELECT count(*) FROM chunks").fetchall()[0][0]))
        if not (force or keyword.compaction_due(written, chunks)):
            return False
        for table in keyword.FTS_TABLES:
            first = True
            while True:
                with self._write_lock, db:
                    if not keyword.compact_step(db, table, first):
                        break
                first = False
        with self._write_lock, db:
            meta.add(db, meta.KEYWORD_WRITES_KEY, -written)
        return True

    def _delete_chunks(self, db: apsw.Connection, url: str) -> int:
        """Delete a source's chunks everywhere: virtual tables have no foreign keys."""
        ids = [
            row[0]
            for row in db.execute(
                "SELECT chunks.id FROM chunks JOIN sources ON sources.id = chunks.source_id "
                "WHERE sources.url = ?",
                (url,),
            )
        ]
        if not ids:
            return 0
        rows = [(chunk_id,) for chunk_id in ids]
        db.executemany("DELETE FROM chunks_fts WHERE rowid = ?", rows)
        db.executemany("DELETE FROM chunks_trigram WHERE rowid = ?", rows)
        if vectors.table_exists(db):
            vectors.delete(db, ids)
        db.executemany("DELETE FROM chunks WHERE id = ?", rows)
        return len(ids)

    def replace_embeddings(
        self, model: str, dim: int, batches: Iterator[tuple[list[int], vectors.Matrix]]
    ) -> int:
        """Swap every vector for one from `model` in a single transaction (re-index)."""
        count = 0
        with self._write_lock, self._writer:
            vectors.drop_table(self._writer)
            vectors.create_table(self._writer, dim)
            for ids, matrix in batches:
                vectors.insert(self._writer, ids, matrix)
                count += len(ids)
            meta.record_embedding(self._writer, model, dim)
        return count

    # -- reads -------------------------------------------------------------------------

    def indexed_chunks(self) -> list[IndexedChunk]:
        rows = self._reader().execute(
            "SELECT chunks.id, chunks.kind, chunks.heading_path, chunks.text, sources.title "
            "FROM chunks JOIN sources ON sources.id = chunks.source_id ORDER BY chunks.id"
        )
        return [
            IndexedChunk(
                chunk_id,
                ChunkDraft(text, ChunkKind(kind), tuple(json.loads(path))).indexed_text(title),
            )
            for chunk_id, kind, path, text, title in rows
        ]

    def chunks(self, ids: list[int]) -> list[StoredChunk]:
        """The chunks with these ids, in the order asked (unknown ids are skipped)."""
        if not ids:
            return []
        placeholders = ",".join("?" * len(ids))
        rows = self._reader().execute(
            "SELECT chunks.id, sources.url, sources.title, chunks.ordinal, chunks.kind, "
            "chunks.heading_path, chunks.text FROM chunks "
            f"JOIN sources ON sources.id = chunks.source_id WHERE chunks.id IN ({placeholders})",
            ids,
        )
        by_id = {
            row[0]: StoredChunk(
                row[0], row[1], row[2], row[3], ChunkKind(row[4]), tuple(json.loads(row[5])), row[6]
            )
            for row in rows
        }
        return [by_id[i] for i in ids if i in by_id]

    def search_keyword(
        self, query: str, limit: int, params: keyword.Bm25Params = keyword.DEFAULT_BM25
    ) -> list[ScoredId]:
        return keyword.search_keyword(self._reader(), query, limit, params, self._frequencies)

    def search_tokens(
        self, query: str, limit: int, params: keyword.Bm25Params = keyword.DEFAULT_BM25
    ) -> list[ScoredId]:
        return keyword.token_hits(self._reader(), query, limit, params, self._frequencies)

    def search_phrases(
        self, query: str, limit: int, params: keyword.Bm25Params = keyword.DEFAULT_BM25
    ) -> list[ScoredId]:
        return keyword.phrase_hits(self._reader(), query, limit, params, self._frequencies)

    def search_vector(self, query: vectors.Matrix, limit: int) -> list[ScoredId]:
        return self._vector_index.search(self._reader(), query, limit)

    def stats(self) -> Stats:
        db = self._reader()
        sources = db.execute("SELECT count(*) FROM sources").fetchall()[0][0]
        by_kind = {
            str(kind): int(str(count))
            for kind, count in db.execute("SELECT kind, count(*) FROM chunks GROUP BY kind")
        }
        page_count = db.execute("PRAGMA page_count").fetchall()[0][0]
        page_size = db.execute("PRAGMA page_size").fetchall()[0][0]
        model, dim = self.embedding_model()
        return Stats(
            sources=int(str(sources)),
            chunks=sum(by_kind.values()),
            chunks_by_kind=by_kind,
            db_bytes=int(str(page_count)) * int(str(page_size)),
            embedding_model=model,
            embedding_dim=dim,
        )

    # -- conversations (Slack) ---------------------------------------------------------

    def record_answer(
        self, *, channel: str, thread_ts: str, question: str, answer: str, sources: list[str]
    ) -> int:
        with self._write_lock, self._writer:
            conversations.remember_thread(self._writer, channel, thread_ts)
            answer_id = conversations.record_answer(
                self._writer,
                channel=channel,
                thread_ts=thread_ts,
                question=question,
                answer=answer,
                sources=sources,
            )
        return answer_id

    def record_feedback(self, answer_id: int, user_id: str, vote: int) -> bool:
        with self._write_lock, self._writer:
            recorded = conversations.record_feedback(self._writer, answer_id, user_id, vote)
        return recorded

    def feedback_counts(self) -> conversations.FeedbackCounts:
        return conversations.feedback_counts(self._reader())

    def remember_thread(self, channel: str, thread_ts: str) -> None:
        with self._write_lock, self._writer:
            conversations.remember_thread(self._writer, channel, thread_ts)

    def is_bot_thread(self, channel: str, thread_ts: str) -> bool:
        return conversations.is_bot_thread(self._reader(), channel, thread_ts)

    def source_urls(self) -> list[str]:
        return [row[0] for row in self._reader().execute("SELECT url FROM sources ORDER BY url")]
