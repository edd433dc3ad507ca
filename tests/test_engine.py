import logging

import pytest

from bot.ingest.pipeline import Document, Ingestor
from bot.search.engine import SearchConfig, SearchEngine, fetch_count
from storage.knowledge_base import KnowledgeBase
from tests.fakes import HashingEmbedder

DOCUMENTS = [
    Document("u/dragon", "Dragon", "The dragon king guards the castle. His HP is 200."),
    Document("u/slime", "Slime", "Slimes are weak monsters found near the village."),
    Document("u/shop", "Shop", "The village shop sells herbs and copper swords."),
    Document("u/castle", "Castle", "The castle has a hidden basement with treasure."),
]


@pytest.fixture
async def engine(kb: KnowledgeBase, embedder: HashingEmbedder) -> SearchEngine:
    kb.bind_embedding(embedder.name, embedder.dim)
    await Ingestor(kb, embedder, chunk_size=500, chunk_overlap=50).ingest_many(DOCUMENTS)
    return SearchEngine(kb, embedder, SearchConfig(n_results=3))


def test_fetch_count_has_a_floor() -> None:
    assert fetch_count(5) == 30
    assert fetch_count(20) == 60


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
async def test_each_mode_finds_the_obvious_document(engine: SearchEngine, mode: str) -> None:
    result = await engine.with_config(mode=mode).search("dragon king HP")
    assert result.hits[0].chunk.source_url == "u/dragon"
    assert len(result.hits) <= 3
    assert "total" in result.timings_ms


async def test_hybrid_hits_carry_every_score(engine: SearchEngine) -> None:
    result = await engine.search("dragon castle")
    top = result.hits[0]
    assert top.vector_distance is not None and 0.0 <= top.vector_distance <= 2.0
    assert top.bm25_score is not None and top.bm25_score > 0
    assert 0.0 < top.combined_score <= 1.0
    assert {"keyword", "embed_query", "vector", "fusion", "total"} <= set(result.timings_ms)
    scores = [hit.combined_score for hit in result.hits]
    assert scores == sorted(scores, reverse=True)


async def test_vector_only_hits_have_no_bm25(engine: SearchEngine) -> None:
    result = await engine.with_config(mode="vector").search("zzz unrelated words")
    assert all(hit.bm25_score is None for hit in result.hits)
    assert "keyword" not in result.timings_ms


async def test_rrf_fusion(engine: SearchEngine) -> None:
    result = await engine.with_config(fusion="rrf").search("village shop herbs")
    assert result.hits[0].chunk.source_url == "u/shop"
    assert result.hits[0].combined_score == pytest.approx(1 / 61 + 1 / 61, rel=0.05)


async def test_similarity_threshold_drops_distant_vectors(engine: SearchEngine) -> None:
    strict = await engine.with_config(mode="vector", similarity_threshold=0.0001).search("qqq")
    assert strict.hits == []
    loose = await engine.with_config(mode="vector", similarity_threshold=2.0).search("qqq")
    assert len(loose.hits) == 3


async def test_min_combined_score_filters(engine: SearchEngine) -> None:
    result = await engine.with_config(min_combined_score=0.99).search("dragon king HP")
    assert [hit.chunk.source_url for hit in result.hits] == ["u/dragon"]


async def test_empty_knowledge_base_returns_nothing(
    kb: KnowledgeBase, embedder: HashingEmbedder
) -> None:
    kb.bind_embedding(embedder.name, embedder.dim)
    result = await SearchEngine(kb, embedder, SearchConfig()).search("anything")
    assert result.hits == []


async def test_debug_log_on_and_off(engine: SearchEngine, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="bot.search.engine")
    await engine.search("dragon")
    assert not caplog.records
    await engine.with_config(debug_log=True).search("dragon")
    text = caplog.text
    assert "RAG retrieve: query='dragon'" in text
    assert "RAG result 1: distance=" in text and "source='u/dragon'" in text
    assert "RAG result 1 text:" in text
