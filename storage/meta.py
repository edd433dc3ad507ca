"""Build facts recorded with the data, so a file is never searched with the wrong model."""

from __future__ import annotations

import apsw

from storage.db import sqlite_vec_version
from storage.errors import EmbeddingMismatchError

MODEL_KEY = "embedding_model"
DIM_KEY = "embedding_dim"
# The write counter; its key predates the keyword caches that read it too.
GENERATION_KEY = "vectors_generation"
# Chunk rows inserted or deleted since the keyword indexes were last compacted.
KEYWORD_WRITES_KEY = "keyword_writes_since_compaction"


def get(db: apsw.Connection, key: str) -> str | None:
    rows = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
    return str(rows[0][0]) if rows else None


def put(db: apsw.Connection, key: str, value: str) -> None:
    db.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def add(db: apsw.Connection, key: str, amount: int) -> None:
    """Add to an integer value (missing counts as 0)."""
    db.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
        "SET value = CAST(value AS INTEGER) + excluded.value",
        (key, str(amount)),
    )


def bump_generation(db: apsw.Connection) -> None:
    """Count one more write of chunks or vectors (every write of chunks writes vectors too).

    In-memory copies (the vector matrix, keyword chunk counts) reload when it has moved.
    """
    add(db, GENERATION_KEY, 1)


def generation(db: apsw.Connection) -> int:
    rows = db.execute("SELECT value FROM meta WHERE key = ?", (GENERATION_KEY,)).fetchall()
    return int(str(rows[0][0])) if rows else 0


def record_embedding(db: apsw.Connection, model: str, dim: int) -> None:
    put(db, MODEL_KEY, model)
    put(db, DIM_KEY, str(dim))
    put(db, "sqlite_vec_version", sqlite_vec_version(db))


def check_embedding(db: apsw.Connection, model: str, dim: int) -> bool:
    """True when the file matches `model`/`dim`, False when it has no embeddings yet.

    Raises:
        EmbeddingMismatchError: the file was built with another model or dimension; its
            vectors would be meaningless against this model's queries.
    """
    stored_model, stored_dim = get(db, MODEL_KEY), get(db, DIM_KEY)
    if stored_model is None:
        return False
    if stored_model != model or int(stored_dim or 0) != dim:
        raise EmbeddingMismatchError(
            f"this knowledge base was built with embedding model '{stored_model}' "
            f"({stored_dim} dimensions) but the settings choose '{model}' ({dim} dimensions). "
            "Run `python main.py reindex` to re-embed every chunk with the new model, "
            "or set EMBEDDING_PROVIDER/EMBEDDING_MODEL back."
        )
    return True
