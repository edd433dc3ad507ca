"""Vectors live in a sqlite-vec `vec0` table; k-NN runs over an in-memory copy of it.

Measured here (2 cores): vec0's brute-force cosine k-NN over 100k × 384 floats takes ~100 ms
per query, a numpy matrix product over the same data 18 ms on one core. The table stays the one
source of truth (any SQLite with sqlite-vec can query the file); the copy is rebuilt whenever
the knowledge base's write counter (`meta.generation`) has moved.

Above `EXACT_MAX_ROWS` rows, a 128-dimension PCA projection picks the closest 5% first and only
those are scored exactly: a third of the memory traffic. On scifact and jaquad-dev 99% of the
exact top 10 is in that pool, and nDCG@10 is unchanged with the projection forced on.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import apsw
import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from storage import meta
from storage.records import ScoredId

Matrix = npt.NDArray[np.float32]
EXACT_MAX_ROWS = 20_000
PROJECTED_DIMS = 128
POOL_SHARE = 0.05
PCA_SAMPLE_ROWS = 20_000


def table_exists(db: apsw.Connection) -> bool:
    rows = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='chunk_vectors'"
    ).fetchall()
    return bool(rows)


def create_table(db: apsw.Connection, dim: int) -> None:
    db.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS chunk_vectors USING vec0("
        f"embedding float[{int(dim)}] distance_metric=cosine)"
    )


def drop_table(db: apsw.Connection) -> None:
    db.execute("DROP TABLE IF EXISTS chunk_vectors")
    meta.bump_generation(db)


def insert(db: apsw.Connection, chunk_ids: list[int], vectors: Matrix) -> None:
    normalized = _unit_rows(np.asarray(vectors, dtype=np.float32))
    db.executemany(
        "INSERT INTO chunk_vectors(rowid, embedding) VALUES (?, ?)",
        ((chunk_id, row.tobytes()) for chunk_id, row in zip(chunk_ids, normalized, strict=True)),
    )
    meta.bump_generation(db)


def delete(db: apsw.Connection, chunk_ids: list[int]) -> None:
    if not chunk_ids:
        return
    db.executemany("DELETE FROM chunk_vectors WHERE rowid = ?", ((i,) for i in chunk_ids))
    meta.bump_generation(db)


def _unit_rows(matrix: Matrix) -> Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: Matrix = (matrix / norms).astype(np.float32)
    return unit


@dataclass(frozen=True, slots=True)
class _Projection:
    """Rows mapped onto their top principal components, for picking candidates cheaply.

    Ranking by `projected @ (components @ q)` approximates ranking by `(rows - mean) @ q`,
    which orders rows exactly as `rows @ q` does (the mean's term is the same for all).
    """

    components: Matrix  # (dim, PROJECTED_DIMS)
    projected: Matrix  # (rows, PROJECTED_DIMS)

    @classmethod
    def fit(cls, matrix: Matrix) -> _Projection:
        rng = np.random.default_rng(0)
        sample = matrix[rng.choice(len(matrix), min(len(matrix), PCA_SAMPLE_ROWS), replace=False)]
        mean = sample.mean(axis=0)
        _, _, axes = np.linalg.svd(sample - mean, full_matrices=False)
        components: Matrix = np.ascontiguousarray(axes[:PROJECTED_DIMS].T, dtype=np.float32)
        projected: Matrix = np.ascontiguousarray((matrix - mean) @ components, dtype=np.float32)
        return cls(components, projected)

    def pool(self, query: Matrix, size: int) -> npt.NDArray[np.intp]:
        scores = self.projected @ (query @ self.components)
        return np.argpartition(-scores, size - 1)[:size]


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """The rows of one generation; replaced whole, so a search never mixes two."""

    ids: npt.NDArray[np.int64]
    matrix: Matrix
    projection: _Projection | None


EMPTY = _Snapshot(np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.float32), None)


class VectorIndex:
    """Cosine k-NN over the `vec0` table's rows, held in memory between writes."""

    def __init__(self, exact_max_rows: int = EXACT_MAX_ROWS) -> None:
        # One BLAS thread, process-wide: OpenBLAS's idle threads spin for a while after each
        # product and took the cores the next query embedding needed (100k chunks, 2 cores:
        # p95 165 ms with its default threads, 110 ms with one; benchmarks/latency_100k.py).
        threadpool_limits(1, user_api="blas")
        self._lock = threading.Lock()
        self._exact_max_rows = exact_max_rows
        self._generation = -1
        self._snapshot = EMPTY

    def _refresh(self, db: apsw.Connection) -> _Snapshot:
        with self._lock:
            current = meta.generation(db)
            if current != self._generation:
                self._snapshot = self._load(db)
                self._generation = current
            return self._snapshot

    def _load(self, db: apsw.Connection) -> _Snapshot:
        ids: list[int] = []
        blobs: list[bytes] = []
        if table_exists(db):
            for rowid, blob in db.execute("SELECT rowid, embedding FROM chunk_vectors"):
                ids.append(rowid)
                blobs.append(blob)
        if not blobs:
            return EMPTY
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
        large = len(ids) > self._exact_max_rows and matrix.shape[1] > PROJECTED_DIMS
        return _Snapshot(
            np.asarray(ids, dtype=np.int64), matrix, _Projection.fit(matrix) if large else None
        )

    def search(self, db: apsw.Connection, query: Matrix, limit: int) -> list[ScoredId]:
        """Nearest chunks by cosine distance (0 = same direction), closest first."""
        snapshot = self._refresh(db)
        ids, matrix = snapshot.ids, snapshot.matrix
        if len(ids) == 0 or limit <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(q))
        if norm == 0.0 or q.shape[0] != matrix.shape[1]:
            return []
        q = q / norm
        k = min(limit, len(ids))
        pool_size = max(k, int(POOL_SHARE * len(ids)))
        if snapshot.projection is None or pool_size >= len(ids):
            rows = np.arange(len(ids))
            similarity = matrix @ q
        else:
            rows = snapshot.projection.pool(q, pool_size)
            similarity = matrix[rows] @ q
        top = np.argpartition(-similarity, k - 1)[:k]
        top = top[np.argsort(-similarity[top])]
        return [ScoredId(int(ids[rows[i]]), float(1.0 - similarity[i])) for i in top]
