import threading

import apsw
import numpy as np
import pytest

from storage import meta, migrations
from storage.db import connect
from storage.errors import EmbeddingMismatchError, SchemaTooNewError
from storage.knowledge_base import KnowledgeBase
from storage.records import ChunkDraft, ChunkKind, Source
from storage.vectors import VectorIndex

DIM = 4


def vectors(count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((count, DIM)).astype(np.float32)


def drafts(*texts: str) -> list[ChunkDraft]:
    return [ChunkDraft(text) for text in texts]


@pytest.fixture
def bound(kb: KnowledgeBase) -> KnowledgeBase:
    kb.bind_embedding("test/model", DIM)
    return kb


def count(kb: KnowledgeBase, table: str) -> int:
    return int(str(kb._writer.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]))


def test_file_uses_wal_and_records_migrations(bound: KnowledgeBase) -> None:
    db = connect(bound.path)
    assert db.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"
    assert migrations.applied(db) == [name for name, _ in migrations.MIGRATIONS]
    assert migrations.pending(db) == []


def test_reopening_applies_nothing_twice(bound: KnowledgeBase) -> None:
    bound.replace_source(Source("u"), drafts("hello world"), vectors(1))
    again = KnowledgeBase(bound.path)
    assert again.stats().chunks == 1
    again.close()


def test_unknown_migration_refuses_to_open(bound: KnowledgeBase) -> None:
    bound._writer.execute("INSERT INTO _migrations VALUES ('9999_future', 'x')")
    with pytest.raises(SchemaTooNewError, match="9999_future"):
        KnowledgeBase(bound.path)


def test_replace_swaps_all_indexes(bound: KnowledgeBase) -> None:
    bound.replace_source(Source("u", "T"), drafts("alpha one", "beta two", "gamma"), vectors(3))
    assert bound.replace_source(Source("u", "T"), drafts("delta"), vectors(1, 1)) == 1
    for table in ("chunks", "chunks_fts", "chunks_trigram", "chunk_vectors"):
        assert count(bound, table) == 1, table
    assert bound.search_keyword("alpha", 10) == []
    assert len(bound.search_keyword("delta", 10)) == 1


def test_delete_source(bound: KnowledgeBase) -> None:
    bound.replace_source(Source("a"), drafts("apple pie", "apple tart"), vectors(2))
    bound.replace_source(Source("b"), drafts("banana"), vectors(1, 2))
    assert bound.delete_source("a") == 2
    assert bound.delete_source("a") is None
    stats = bound.stats()
    assert (stats.sources, stats.chunks) == (1, 1)
    assert count(bound, "chunk_vectors") == 1
    assert bound.search_keyword("apple", 10) == []


def test_stats_by_kind_and_model(bound: KnowledgeBase) -> None:
    chunks = [ChunkDraft("p"), ChunkDraft("| a | b |", ChunkKind.TABLE, ("H",))]
    bound.replace_source(Source("u"), chunks, vectors(2))
    stats = bound.stats()
    assert stats.chunks_by_kind == {"prose": 1, "table": 1}
    assert stats.embedding_model == "test/model"
    assert stats.embedding_dim == DIM
    assert stats.db_bytes > 0
    stored = bound.chunks([2, 1])
    assert [c.id for c in stored] == [2, 1]
    assert stored[0].heading_path == ("H",)


def test_failed_write_rolls_back_to_previous_state(bound: KnowledgeBase) -> None:
    bound.replace_source(Source("u"), drafts("original text"), vectors(1))
    wrong_dimension = np.ones((1, DIM + 3), dtype=np.float32)
    with pytest.raises(apsw.Error):
        bound.replace_source(Source("u"), drafts("new text"), wrong_dimension)
    assert [c.text for c in bound.chunks([1])] == ["original text"]
    assert len(bound.search_keyword("original", 10)) == 1
    assert bound.search_keyword("new", 10) == []


def test_readers_never_see_a_half_replaced_source(bound: KnowledgeBase) -> None:
    bound.replace_source(Source("u"), drafts(*["word"] * 5), vectors(5))
    seen: set[int] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.add(len(bound.search_keyword("word", 100)))

    reader = threading.Thread(target=read)
    reader.start()
    for round_ in range(30):
        size = 5 if round_ % 2 else 8
        bound.replace_source(Source("u"), drafts(*["word"] * size), vectors(size, round_))
    stop.set()
    reader.join()
    assert seen <= {5, 8}


def test_other_embedding_model_is_refused(bound: KnowledgeBase) -> None:
    with pytest.raises(EmbeddingMismatchError, match="reindex"):
        bound.bind_embedding("other/model", DIM)
    with pytest.raises(EmbeddingMismatchError):
        bound.bind_embedding("test/model", DIM * 2)
    bound.bind_embedding("test/model", DIM)  # the same model is fine


def test_replace_embeddings_switches_model(bound: KnowledgeBase) -> None:
    bound.replace_source(Source("u"), drafts("a", "b"), vectors(2))
    ids = [chunk.id for chunk in bound.indexed_chunks()]
    new = np.eye(2, 6, dtype=np.float32)
    assert bound.replace_embeddings("new/model", 6, iter([(ids, new)])) == 2
    assert bound.embedding_model() == ("new/model", 6)
    hits = bound.search_vector(np.array([1, 0, 0, 0, 0, 0], dtype=np.float32), 2)
    assert hits[0].chunk_id == ids[0]
    assert hits[0].score == pytest.approx(0.0, abs=1e-6)


def test_vector_search_orders_by_distance_and_sees_new_writes(bound: KnowledgeBase) -> None:
    bound.replace_source(Source("a"), drafts("x"), np.array([[1, 0, 0, 0]], dtype=np.float32))
    query = np.array([1, 0.2, 0, 0], dtype=np.float32)
    assert [h.chunk_id for h in bound.search_vector(query, 5)] == [1]
    bound.replace_source(Source("b"), drafts("y"), np.array([[0, 1, 0, 0]], dtype=np.float32))
    hits = bound.search_vector(query, 5)
    assert [h.chunk_id for h in hits] == [1, 2]
    assert hits[0].score < hits[1].score


def test_large_indexes_pick_candidates_by_projection_then_score_exactly(kb: KnowledgeBase) -> None:
    """Above the exact-search size, a PCA pool is scored exactly: near copies still come first."""
    dim, rows = 384, 1200
    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((rows, dim)).astype(np.float32)
    kb.bind_embedding("test/model", dim)
    kb.replace_source(Source("big"), [ChunkDraft(f"t{i}") for i in range(rows)], matrix)
    ids = [chunk.id for chunk in kb.indexed_chunks()]
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    exact = VectorIndex(exact_max_rows=rows)
    projected = VectorIndex(exact_max_rows=0)
    db = kb._reader()
    for row in range(0, rows, 100):
        query = matrix[row] + rng.normal(0, 0.3, dim).astype(np.float32)
        hits = projected.search(db, query, 10)
        assert hits[0].chunk_id == ids[row]
        expected = 1.0 - float(unit[row] @ (query / np.linalg.norm(query)))
        assert hits[0].score == pytest.approx(expected, abs=1e-5)
        assert [hit.score for hit in hits] == sorted(hit.score for hit in hits)
        assert hits[0] == exact.search(db, query, 10)[0]


@pytest.mark.parametrize("exact_max_rows", [10_000, 0])
def test_vector_copy_catches_up_on_writes_as_a_reload_would(
    kb: KnowledgeBase, exact_max_rows: int
) -> None:
    """Appending new rows and masking removed ones must rank exactly as a fresh load does."""
    dim = 256  # above the projection's 128 dimensions, so exact_max_rows=0 projects
    rng = np.random.default_rng(2)
    # Rows spanning 64 directions: the projection keeps them all, so its pool is exact and
    # both copies must agree whatever rows each fitted its projection on.
    basis = rng.standard_normal((64, dim)).astype(np.float32)
    kb.bind_embedding("test/model", dim)

    def page(url: str, rows: int) -> None:
        matrix = rng.standard_normal((rows, 64)).astype(np.float32) @ basis
        kb.replace_source(Source(url), [ChunkDraft(f"{url}{i}") for i in range(rows)], matrix)

    for number in range(16):
        page(f"p{number}", 40)
    kept = VectorIndex(exact_max_rows=exact_max_rows)
    db = kb._reader()
    queries = rng.standard_normal((5, 64)).astype(np.float32) @ basis
    kept.search(db, queries[0], 10)
    loaded = kept._snapshot
    page("p1", 30)  # replaced: old rows masked, new ones appended
    kb.delete_source("p2")
    page("new", 20)
    for query in queries:
        ours, reloaded = (
            kept.search(db, query, 10),
            VectorIndex(exact_max_rows).search(db, query, 10),
        )
        assert [hit.chunk_id for hit in ours] == [hit.chunk_id for hit in reloaded]
        assert [hit.score for hit in ours] == pytest.approx([hit.score for hit in reloaded])
    caught_up = kept._snapshot
    assert caught_up.fitted_rows == loaded.fitted_rows  # no reload happened
    assert caught_up.count == 640 + 30 + 20
    assert len(caught_up.live_ids()) == 640 - 40 + 30 - 40 + 20
    assert set(caught_up.live_ids()) == {chunk.id for chunk in kb.indexed_chunks()}
    # The snapshot taken before the writes is untouched by the appends.
    assert loaded.count == 640 and loaded.alive is None


def test_vector_copy_reloads_after_reindex_and_long_gaps(
    bound: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    bound.replace_source(Source("u"), drafts("a", "b"), vectors(2))
    query = np.array([1, 0, 0, 0], dtype=np.float32)
    assert len(bound.search_vector(query, 5)) == 2
    ids = [chunk.id for chunk in bound.indexed_chunks()]
    # Re-index to another dimension: the log restarts, the copy reloads whole.
    bound.replace_embeddings("new/model", 6, iter([(ids, np.eye(2, 6, dtype=np.float32))]))
    hits = bound.search_vector(np.array([0, 1, 0, 0, 0, 0], dtype=np.float32), 5)
    assert hits[0].chunk_id == ids[1]
    # A copy further behind than the log keeps also reloads whole, and stays right.
    monkeypatch.setattr("storage.vectors.LOG_KEEP", 2)
    for number in range(5):
        bound.replace_source(Source(f"v{number}"), drafts("x", "y"), np.ones((2, 6), np.float32))
    assert count(bound, "vector_log") <= 3
    fresh = VectorIndex().search(bound._reader(), np.ones(6, dtype=np.float32), 20)
    kept = bound.search_vector(np.ones(6, dtype=np.float32), 20)
    assert {hit.chunk_id for hit in kept} == {hit.chunk_id for hit in fresh}
    assert len(fresh) == 12


def test_enough_chunk_writes_make_keyword_compaction_due(
    bound: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("storage.keyword.COMPACT_MIN_ROWS", 12)
    texts = drafts("apple pie recipe", "banana split", "cherry tart")
    bound.replace_source(Source("u"), texts, vectors(3))
    bound.replace_source(Source("u"), texts, vectors(3))  # 3 deleted + 3 inserted
    assert meta.get(bound._writer, meta.KEYWORD_WRITES_KEY) == "9"
    assert not bound.compact_keyword_index()  # not due yet
    bound.delete_source("u")
    bound.replace_source(Source("u"), texts, vectors(3))
    assert bound.compact_keyword_index()  # 15 rows written
    assert meta.get(bound._writer, meta.KEYWORD_WRITES_KEY) == "0"
    current = {chunk.text: chunk.id for chunk in bound.chunks(list(range(1, 20)))}
    assert [hit.chunk_id for hit in bound.search_keyword("banana", 5)] == [current["banana split"]]
    assert bound.compact_keyword_index(force=True)
    assert [hit.chunk_id for hit in bound.search_keyword("cherry", 5)] == [current["cherry tart"]]
    assert bound.search_keyword("apple pie", 5)[0].chunk_id == current["apple pie recipe"]
