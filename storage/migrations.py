"""Ordered, named schema steps, each applied once inside a transaction and recorded.

New steps go at the end of `MIGRATIONS`; a released step is never edited, so every file
reaches the same schema by the same path.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import apsw

from storage.errors import SchemaTooNewError

Migration = tuple[str, Callable[[apsw.Connection], None]]


def _initial_schema(db: apsw.Connection) -> None:
    db.execute(
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE sources(
            id INTEGER PRIMARY KEY,
            url TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL DEFAULT '',
            fetched_at TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            etag TEXT,
            last_modified TEXT
        );

        CREATE TABLE chunks(
            id INTEGER PRIMARY KEY,
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('prose', 'table', 'heading')),
            heading_path TEXT NOT NULL DEFAULT '[]',
            text TEXT NOT NULL,
            UNIQUE (source_id, ordinal)
        );

        -- MeCab/stemmed tokens joined by spaces; unicode61 only splits them again, so any
        -- SQLite with FTS5 can read this file.
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            tokens, content='', contentless_delete=1,
            tokenize='unicode61 remove_diacritics 0'
        );
        -- Normalized raw text for phrase look-ups where MeCab segments query and page
        -- differently (りゅうおう).
        CREATE VIRTUAL TABLE chunks_trigram USING fts5(
            text, content='', contentless_delete=1, tokenize='trigram'
        );

        -- Entity graph: filled by the graph builder, traversed by graph search.
        CREATE TABLE entities(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT '',
            UNIQUE (name, kind)
        );
        CREATE TABLE entity_mentions(
            entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            PRIMARY KEY (entity_id, chunk_id)
        ) WITHOUT ROWID;
        CREATE INDEX entity_mentions_by_chunk ON entity_mentions(chunk_id);
        CREATE TABLE entity_edges(
            source_entity INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            target_entity INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            relation TEXT NOT NULL DEFAULT '',
            weight REAL NOT NULL DEFAULT 1.0,
            chunk_id INTEGER REFERENCES chunks(id) ON DELETE CASCADE,
            PRIMARY KEY (source_entity, target_entity, relation)
        ) WITHOUT ROWID;
        CREATE INDEX entity_edges_by_target ON entity_edges(target_entity);
        """
    )


def _conversations(db: apsw.Connection) -> None:
    db.execute(
        """
        -- Answers given in Slack, kept with their sources for feedback and later evaluation.
        CREATE TABLE answers(
            id INTEGER PRIMARY KEY,
            channel TEXT NOT NULL,
            thread_ts TEXT NOT NULL,
            question TEXT NOT NULL,
            answer TEXT NOT NULL,
            sources TEXT NOT NULL DEFAULT '[]',
            grade TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL
        );
        CREATE TABLE feedback(
            answer_id INTEGER NOT NULL REFERENCES answers(id) ON DELETE CASCADE,
            user_id TEXT NOT NULL,
            vote INTEGER NOT NULL CHECK (vote IN (-1, 1)),
            created_at TEXT NOT NULL,
            PRIMARY KEY (answer_id, user_id)
        ) WITHOUT ROWID;
        -- Threads the bot has answered in: follow-ups there need no new mention.
        CREATE TABLE bot_threads(
            channel TEXT NOT NULL,
            thread_ts TEXT NOT NULL,
            PRIMARY KEY (channel, thread_ts)
        ) WITHOUT ROWID;
        """
    )


def _keyword_vocabulary(db: apsw.Connection) -> None:
    # Document frequency of every indexed token, read when pruning common query words.
    db.execute("CREATE VIRTUAL TABLE chunks_fts_vocab USING fts5vocab(chunks_fts, row)")


def _vector_log(db: apsw.Connection) -> None:
    db.execute(
        """
        -- Every vector insert and delete in order, so in-memory copies catch up on the rows
        -- that changed instead of reloading all of them.
        CREATE TABLE vector_log(
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            chunk_id INTEGER NOT NULL,
            added INTEGER NOT NULL CHECK (added IN (0, 1))
        );
        """
    )


MIGRATIONS: list[Migration] = [
    ("0001_initial_schema", _initial_schema),
    ("0002_conversations", _conversations),
    ("0003_keyword_vocabulary", _keyword_vocabulary),
    ("0004_vector_log", _vector_log),
]


def applied(db: apsw.Connection) -> list[str]:
    """Names of the steps already applied, oldest first (reads only)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    return [row[0] for row in db.execute("SELECT name FROM _migrations ORDER BY rowid")]


def pending(db: apsw.Connection) -> list[Migration]:
    done = applied(db)
    known = [name for name, _ in MIGRATIONS]
    unknown = [name for name in done if name not in known]
    if unknown:
        raise SchemaTooNewError(
            f"database schema has steps this version does not know: {', '.join(unknown)}; "
            "upgrade shiori to open it"
        )
    return [step for step in MIGRATIONS if step[0] not in done]


def apply(db: apsw.Connection) -> list[str]:
    """Apply every pending step, each in its own transaction; returns the names applied."""
    names = []
    for name, step in pending(db):
        with db:
            step(db)
            db.execute(
                "INSERT INTO _migrations(name, applied_at) VALUES (?, ?)",
                (name, datetime.now(UTC).isoformat()),
            )
        names.append(name)
    return names
