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
from dataclasses import dataclass, replace
from typing import Any

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


LOG_KEEP = 50_000  # log entries kept; a copy further behind than this reloads whole
RELOAD_SHARE = 0.25  # changes or dead rows beyond this share of rows: reload instead


def drop_table(db: apsw.Connection) -> None:
    db.execute("DROP TABLE IF EXISTS chunk_vectors")
    # Empty the log and skip a number: every in-memory copy then finds a gap after its
    # position and reloads whole, whatever is inserted next.
    db.execute("DELETE FROM vector_log")
    db.execute("UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = 'vector_log'")
    meta.bump_generation(db)


def insert(db: apsw.Connection, chunk_ids: list[int], vectors: Matrix) -> None:
    normalized = _unit_rows(np.asarray(vectors, dtype=np.float32))
    db.executemany(
        "INSERT INTO chunk_vectors(rowid, embedding) VALUES (?, ?)",
        ((chunk_id, row.tobytes()) for chunk_id, row in zip(chunk_ids, normalized, strict=True)),
    )
    _log(db, chunk_ids, added=True)
    db.execute(
        "DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - ?", (LOG_KEEP,)
    )


def delete(db: apsw.Connection, chunk_ids: list[int]) -> None:
    if not chunk_ids:
        return
    db.executemany("DELETE FROM chunk_vectors WHERE rowid = ?", ((i,) for i in chunk_ids))
    _log(db, chunk_ids, added=False)


def _log(db: apsw.Connection, chunk_ids: list[int], added: bool) -> None:
    db.executemany(
        "INSERT INTO vector_log(chunk_id, added) VALUES (?, ?)",
        ((chunk_id, int(added)) for chunk_id in chunk_ids),
    )
    meta.bump_generation(db)


def _unit_rows(matrix: Matrix) -> Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: Matrix = (matrix / norms).astype(np.float32)
    return unit


def _fetch(db: apsw.Connection, chunk_ids: list[int] | None) -> tuple[list[int], Matrix | None]:
    """Rows of `chunk_vectors` (all of them for None), as ids and one matrix."""
    ids: list[int] = []
    blobs: list[bytes] = []
    if chunk_ids is None:
        query: list[tuple[str, list[int]]] = [("SELECT rowid, embedding FROM chunk_vectors", [])]
    else:
        query = [
            (
                "SELECT rowid, embedding FROM chunk_vectors WHERE rowid IN "
                f"({','.join('?' * len(part))})",
                part,
            )
            for part in (chunk_ids[i : i + 500] for i in range(0, len(chunk_ids), 500))
        ]
    if table_exists(db):
        for sql, parameters in query:
            for rowid, blob in db.execute(sql, parameters):
                ids.append(rowid)
                blobs.append(blob)
    if not blobs:
        return [], None
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
    return ids, matrix


@dataclass(frozen=True, slots=True)
class _Projection:
    """Rows mapped onto their top principal components, for picking candidates cheaply.

    Ranking by `projected @ (components @ q)` approximates ranking by `(rows - mean) @ q`,
    which orders rows exactly as `rows @ q` does (the mean's term is the same for all).
    """

    mean: Matrix  # (dim,)
    components: Matrix  # (dim, PROJECTED_DIMS)

    @classmethod
    def fit(cls, matrix: Matrix) -> _Projection:
        rng = np.random.default_rng(0)
        sample = matrix[rng.choice(len(matrix), min(len(matrix), PCA_SAMPLE_ROWS), replace=False)]
        mean = sample.mean(axis=0)
        _, _, axes = np.linalg.svd(sample - mean, full_matrices=False)
        components: Matrix = np.ascontiguousarray(axes[:PROJECTED_DIMS].T, dtype=np.float32)
        return cls(mean.astype(np.float32), components)

    def project(self, rows: Matrix) -> Matrix:
        projected: Matrix = ((rows - self.mean) @ self.components).astype(np.float32)
        return projected


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """The rows as of one point of the vector log; replaced whole, so a search never mixes
    two. Rows `[:count]` of the arrays are this snapshot's; a later snapshot may append past
    them in place (never overwrite), so searching an older one stays correct."""

    count: int
    ids: npt.NDArray[np.int64]
    matrix: Matrix
    alive: npt.NDArray[np.bool_] | None  # None: every row is live
    projection: _Projection | None
    projected: Matrix  # rows projected, when `projection` is set
    log_position: int
    fitted_rows: int  # rows the projection was fitted on

    def live_ids(self) -> npt.NDArray[np.int64]:
        ids = self.ids[: self.count]
        return ids if self.alive is None else ids[self.alive[: self.count]]


EMPTY = _Snapshot(
    0,
    np.empty(0, dtype=np.int64),
    np.empty((0, 0), dtype=np.float32),
    None,
    None,
    np.empty((0, 0), dtype=np.float32),
    -1,
    0,
)


class VectorIndex:
    """Cosine k-NN over the `vec0` table's rows, held in memory between writes.

    After a write the copy catches up from `vector_log`: new rows are appended, removed
    rows are masked. Only a long gap, many dead rows or outgrowing the PCA fit reload it
    whole: at 100k rows a reload takes seconds, which every question would pay while a
    crawl stores page after page.
    """

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
            if meta.generation(db) != self._generation:
                with db:  # one read transaction: the log, the table and the counter agree
                    self._generation = meta.generation(db)
                    self._snapshot = self._catch_up(db) or self._load(db)
            return self._snapshot

    @staticmethod
    def _log_position(db: apsw.Connection) -> tuple[int | None, int]:
        """The oldest and newest log entries (None, 0 when the log is empty)."""
        first, last = db.execute("SELECT min(seq), max(seq) FROM vector_log").fetchall()[0]
        return (None if first is None else int(str(first))), int(str(last or 0))

    def _load(self, db: apsw.Connection) -> _Snapshot:
        _, position = self._log_position(db)
        ids, matrix = _fetch(db, None)
        if matrix is None:
            return replace(EMPTY, log_position=position)
        projection = None
        projected = EMPTY.projected
        if len(ids) > self._exact_max_rows and matrix.shape[1] > PROJECTED_DIMS:
            projection = _Projection.fit(matrix)
            projected = np.ascontiguousarray(projection.project(matrix), dtype=np.float32)
        return _Snapshot(
            len(ids),
            np.asarray(ids, dtype=np.int64),
            matrix,
            None,
            projection,
            projected,
            position,
            len(ids),
        )

    def _catch_up(self, db: apsw.Connection) -> _Snapshot | None:
        """The current snapshot plus the logged changes, or None when a reload is due."""
        old = self._snapshot
        first, last = self._log_position(db)
        if old.count == 0 or first is None or first > old.log_position + 1:
            return None
        if last - old.log_position > RELOAD_SHARE * old.count:
            return None
        final: dict[int, bool] = {}
        for chunk_id, added in db.execute(
            "SELECT chunk_id, added FROM vector_log WHERE seq > ? ORDER BY seq",
            (old.log_position,),
        ):
            final[chunk_id] = bool(added)
        added_ids, matrix = _fetch(db, [i for i, added in final.items() if added])
        touched = np.fromiter(final, dtype=np.int64, count=len(final))
        alive = np.ones(old.count, dtype=bool) if old.alive is None else old.alive[: old.count]
        alive = alive & ~np.isin(old.ids[: old.count], touched)
        count = old.count + len(added_ids)
        dead = old.count - int(alive.sum())
        crosses = old.projection is None and count > self._exact_max_rows
        if dead > RELOAD_SHARE * count or crosses or count > 2 * old.fitted_rows:
            return None
        return self._append(old, alive, added_ids, matrix, last)

    @staticmethod
    def _append(
        old: _Snapshot,
        alive: npt.NDArray[np.bool_],
        added_ids: list[int],
        matrix: Matrix | None,
        position: int,
    ) -> _Snapshot:
        """Write the new rows after `old.count`, growing the arrays when they are full."""
        count = old.count + len(added_ids)
        ids, rows, projected = old.ids, old.matrix, old.projected
        if matrix is not None:
            if count > len(ids):
                capacity = count + count // 4 + 1024
                ids = _grown(ids[: old.count], capacity)
                rows = _grown(rows[: old.count], capacity)
                if old.projection is not None:
                    projected = _grown(projected[: old.count], capacity)
            ids[old.count : count] = added_ids
            rows[old.count : count] = matrix
            if old.projection is not None:
                projected[old.count : count] = old.projection.project(matrix)
        mask = np.concatenate([alive, np.ones(len(added_ids), dtype=bool)])
        return _Snapshot(
            count,
            ids,
            rows,
            None if mask.all() else mask,
            old.projection,
            projected,
            position,
            old.fitted_rows,
        )

    def search(self, db: apsw.Connection, query: Matrix, limit: int) -> list[ScoredId]:
        """Nearest chunks by cosine distance (0 = same direction), closest first."""
        snapshot = self._refresh(db)
        n = snapshot.count
        live = n if snapshot.alive is None else int(snapshot.alive[:n].sum())
        if live == 0 or limit <= 0:
            return []
        matrix = snapshot.matrix[:n]
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(q))
        if norm == 0.0 or q.shape[0] != matrix.shape[1]:
            return []
        q = q / norm
        k = min(limit, live)
        pool_size = max(k, int(POOL_SHARE * live))
        if snapshot.projection is None or pool_size >= live:
            rows = np.arange(n)
            similarity = matrix @ q
        else:
            rough = snapshot.projected[:n] @ (q @ snapshot.projection.components)
            if snapshot.alive is not None:
                rough[~snapshot.alive[:n]] = -np.inf
            rows = np.argpartition(-rough, pool_size - 1)[:pool_size]
            similarity = matrix[rows] @ q
        if snapshot.alive is not None:
            similarity[~snapshot.alive[rows]] = -np.inf
        top = np.argpartition(-similarity, k - 1)[:k]
        top = top[np.argsort(-similarity[top])]
        return [ScoredId(int(snapshot.ids[rows[i]]), float(1.0 - similarity[i])) for i in top]


def _grown(array: npt.NDArray[Any], capacity: int) -> npt.NDArray[Any]:
    grown = np.empty((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[: len(array)] = array
    return grown
