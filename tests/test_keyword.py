from dataclasses import replace

import numpy as np
import pytest

from bot.ingest.chunk import chunk_document
from bot.ingest.extract import extract_html
from storage.keyword import (
    Bm25Params,
    ChunkFrequencies,
    TermPlan,
    phrase_hits,
    plan_terms,
    token_hits,
)
from storage.knowledge_base import KnowledgeBase
from storage.records import ChunkDraft, ChunkKind, ScoredId, Source
from tests.conftest import TEST_PAGES


def ids(hits: list[ScoredId]) -> set[int]:
    return {hit.chunk_id for hit in hits}


def store_page(kb: KnowledgeBase, name: str) -> None:
    page = extract_html((TEST_PAGES / name).read_bytes())
    chunks = chunk_document(page.text, 500, 50)
    kb.replace_source(Source(name, page.title), chunks, np.ones((len(chunks), 4), np.float32))


@pytest.fixture
def pages(kb: KnowledgeBase) -> KnowledgeBase:
    kb.bind_embedding("test/model", 4)
    for page in TEST_PAGES.glob("*.html"):
        store_page(kb, page.name)
    return kb


@pytest.mark.parametrize("query", ["りゅうおう", "りゅうおうのHPは？", "リュウオウ りゅうおう"])
def test_proper_noun_finds_its_table_row(pages: KnowledgeBase, query: str) -> None:
    """AC69-70: MeCab cuts りゅうおう as りゅう|おう; the exact-phrase index still finds it."""
    hits = pages.search_keyword(query, 5)
    top = pages.chunks([hits[0].chunk_id])[0]
    assert top.source_url == "table_numeric.html"
    assert top.kind is ChunkKind.TABLE
    assert "| りゅうおう | 200 |" in top.text


def test_exact_keyword_match_ranks_first(pages: KnowledgeBase) -> None:
    hits = pages.search_keyword("デスピサロ", 5)
    assert "デスピサロ" in pages.chunks([hits[0].chunk_id])[0].text


@pytest.mark.parametrize(
    "query",
    ['"', "NEAR(a b)", "*", "a OR", "-x", "col:val", "AND AND", "(((", "^start", "'; DROP TABLE"],
)
def test_query_syntax_is_never_interpreted(pages: KnowledgeBase, query: str) -> None:
    assert isinstance(pages.search_keyword(query, 5), list)


def test_tuned_bm25_matches_builtin_at_defaults_and_differs_otherwise(
    pages: KnowledgeBase,
) -> None:
    match = '"モンスター" OR "攻撃力"'
    rows = (
        pages._reader()
        .execute(
            "SELECT -bm25(chunks_fts), shiori_bm25(chunks_fts, 1.2, 0.75), "
            "shiori_bm25(chunks_fts, 2.5, 0.3) FROM chunks_fts WHERE chunks_fts MATCH ?",
            (match,),
        )
        .fetchall()
    )
    assert len(rows) >= 3
    for builtin, python_default, _tuned in rows:
        assert python_default == pytest.approx(builtin, rel=1e-9)
    assert any(tuned != pytest.approx(builtin) for builtin, _, tuned in rows)
    tuned_hits = pages.search_keyword("モンスター 攻撃力", 10, Bm25Params(k1=2.5, b=0.3))
    builtin_hits = pages.search_keyword("モンスター 攻撃力", 10)
    assert {h.chunk_id for h in tuned_hits} == {h.chunk_id for h in builtin_hits}


def test_common_words_are_pruned_from_queries(kb: KnowledgeBase) -> None:
    kb.bind_embedding("test/model", 4)
    texts = [f"common word text number{i}" for i in range(10)] + ["common rare"]
    chunks = [ChunkDraft(text) for text in texts]
    kb.replace_source(Source("u"), chunks, np.ones((len(chunks), 4), np.float32))
    frequency = ChunkFrequencies().lookup(kb._reader(), ["common", "rare", "word", "absent"])
    assert frequency == {"common": 11, "rare": 1, "word": 10, "absent": 0}
    pruning = Bm25Params(max_df=0.5)
    assert plan_terms(["common", "rare", "common"], pruning, frequency, 11) == TermPlan(
        ["rare"], []
    )
    assert plan_terms(["common", "word"], pruning, frequency, 11) == TermPlan(["word"], [])
    assert plan_terms(["common", "rare"], Bm25Params(), frequency, 11) == TermPlan(
        ["common", "rare"], []
    )
    hits = kb.search_keyword("common rare", 20, pruning)
    assert len(hits) == 1
    assert len(kb.search_keyword("common rare", 20)) == 11


def test_chunk_frequencies_are_forgotten_when_chunks_change(kb: KnowledgeBase) -> None:
    kb.bind_embedding("test/model", 4)
    cache = ChunkFrequencies()
    kb.replace_source(Source("a"), [ChunkDraft("zebra")], np.ones((1, 4), np.float32))
    assert cache.lookup(kb._reader(), ["zebra"]) == {"zebra": 1}
    kb.replace_source(Source("b"), [ChunkDraft("zebra pie")], np.ones((1, 4), np.float32))
    assert cache.lookup(kb._reader(), ["zebra"]) == {"zebra": 2}
    kb.delete_source("a")
    assert cache.lookup(kb._reader(), ["zebra", "pie"]) == {"zebra": 1, "pie": 1}


@pytest.mark.parametrize("bm25", [Bm25Params(), Bm25Params(k1=2.0, b=0.5)])
def test_common_words_score_only_what_rare_words_find(kb: KnowledgeBase, bm25: Bm25Params) -> None:
    """Boosters add their BM25 share exactly, but a chunk with boosters only is not fetched."""
    kb.bind_embedding("test/model", 4)
    texts = [f"common filler{i}" for i in range(8)]
    texts += ["rare common common", "rare alone", "rare common", "scarce common"]
    chunks = [ChunkDraft(text) for text in texts]
    kb.replace_source(Source("u"), chunks, np.ones((len(chunks), 4), np.float32))
    db = kb._reader()
    seeded = replace(bm25, candidate_max_chunks=3)
    frequency = {"rare": 3, "common": 10, "scarce": 1}
    assert plan_terms(["rare", "common", "scarce"], seeded, frequency, 12) == TermPlan(
        ["rare", "scarce"], ["common"]
    )
    assert plan_terms(["common"], seeded, frequency, 12) == TermPlan(["common"], [])
    exact = {hit.chunk_id: hit.score for hit in token_hits(db, "rare common scarce", 20, bm25)}
    fast = token_hits(db, "rare common scarce", 20, seeded)
    assert len(exact) == len(texts)
    texts_found = {kb.chunks([hit.chunk_id])[0].text for hit in fast}
    assert texts_found == {"scarce common", "rare common common", "rare common", "rare alone"}
    seeded_exact = [(chunk_id, score) for chunk_id, score in exact.items() if chunk_id in ids(fast)]
    assert [hit.chunk_id for hit in fast] == [
        chunk_id for chunk_id, _ in sorted(seeded_exact, key=lambda item: -item[1])
    ]
    for hit in fast:
        assert hit.score == pytest.approx(exact[hit.chunk_id])
    assert [hit.chunk_id for hit in token_hits(db, "rare common scarce", 2, seeded)] == [
        hit.chunk_id for hit in fast[:2]
    ]


def test_one_common_word_is_left_to_the_token_search(kb: KnowledgeBase) -> None:
    """Trigram look-ups of a single common word cost much and add an IDF near zero."""
    kb.bind_embedding("test/model", 4)
    texts = [f"アメリカの東京タワーの話 {i}" for i in range(5)]
    chunks = [ChunkDraft(text) for text in texts]
    kb.replace_source(Source("u"), chunks, np.ones((len(chunks), 4), np.float32))
    db = kb._reader()
    seeded = Bm25Params(candidate_max_chunks=3)
    assert len(phrase_hits(db, "アメリカ", 10)) == 5
    assert phrase_hits(db, "アメリカ", 10, seeded) == []
    assert len(phrase_hits(db, "東京タワー", 10, seeded)) == 5  # two words: always looked up
    assert len(kb.search_keyword("アメリカ", 10, seeded)) == 5  # the token search still finds it
