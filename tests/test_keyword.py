import numpy as np
import pytest

from bot.ingest.chunk import chunk_document
from bot.ingest.extract import extract_html
from storage.keyword import Bm25Params, prune_common
from storage.knowledge_base import KnowledgeBase
from storage.records import ChunkDraft, ChunkKind, Source
from tests.conftest import TEST_PAGES


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
    db = kb._reader()
    assert prune_common(db, ["common", "rare", "common"], 0.5) == ["rare"]
    assert prune_common(db, ["common", "word"], 0.5) == ["word"]  # the rarest stays
    assert prune_common(db, ["common", "rare"], 1.0) == ["common", "rare"]
    hits = kb.search_keyword("common rare", 20, Bm25Params(max_df=0.5))
    assert len(hits) == 1
    assert len(kb.search_keyword("common rare", 20)) == 11
