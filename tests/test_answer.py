import pytest

from bot.answer import Answer, ExtractiveAnswerer, LLMAnswerer, Turn, best_excerpt, number_sources
from bot.messages import answer as format_answer
from bot.providers.llm import OpenAICompatibleLLM
from bot.search.engine import SearchHit
from storage.records import ChunkKind, StoredChunk
from tests.fake_openai import FakeOpenAI


def hit(chunk_id: int, url: str, text: str, kind: ChunkKind = ChunkKind.PROSE) -> SearchHit:
    chunk = StoredChunk(chunk_id, url, f"Title {url}", 0, kind, (), text)
    return SearchHit(chunk, 0.1, 1.0, 1.0 - chunk_id / 10)


TABLE_HIT = hit(
    1,
    "https://example.com/monsters",
    "| 名前 | HP |\n|---|---|\n| スライム | 8 |\n| りゅうおう | 200 |\n| ゾーマ | 500 |"
    "\n| ドラキー | 12 |",
    ChunkKind.TABLE,
)
PROSE_HIT = hit(
    2,
    "https://example.com/story",
    "勇者は旅に出た。りゅうおうは城に住んでいる。りゅうおうの HP はとても高い。村は平和だった。",
)


def test_sources_are_numbered_once_per_page() -> None:
    hits = [TABLE_HIT, PROSE_HIT, hit(3, "https://example.com/monsters", "more")]
    numbered, citations = number_sources(hits)
    assert [number for number, _ in numbered] == [1, 2, 1]
    assert [c.url for c in citations] == [TABLE_HIT.chunk.source_url, PROSE_HIT.chunk.source_url]


def test_excerpts_pick_matching_rows_and_sentences() -> None:
    table = best_excerpt("りゅうおうのHP", TABLE_HIT)
    assert table.startswith("| 名前 | HP |\n|---|---|")
    assert "| りゅうおう | 200 |" in table
    prose = best_excerpt("りゅうおうのHP", PROSE_HIT)
    assert "りゅうおうの HP はとても高い。" in prose
    assert "村は平和だった" not in prose


async def test_extractive_answer_quotes_with_citations() -> None:
    result = await ExtractiveAnswerer().answer("りゅうおうのHP", [TABLE_HIT, PROSE_HIT])
    assert result.found and not result.generated
    assert "[1]" in result.text and "[2]" in result.text
    rendered = format_answer("ja", result)
    assert "参照元:" in rendered
    assert "[1] Title https://example.com/monsters — https://example.com/monsters" in rendered


async def test_only_quoted_sources_are_cited() -> None:
    hits = [hit(i, f"https://example.com/{i}", f"Passage {i} about dragons.") for i in range(1, 6)]
    result = await ExtractiveAnswerer().answer("dragons", hits)
    assert [c.number for c in result.citations] == [1, 2, 3]
    assert "[4]" not in result.text


async def test_no_hits_is_an_honest_not_found() -> None:
    result = await ExtractiveAnswerer().answer("anything", [])
    assert not result.found
    assert format_answer("ja", result) == "ナレッジベースに該当する情報が見つかりませんでした。"
    assert format_answer("en", result) == "Nothing in the knowledge base answers this."


async def test_llm_answer_gets_passages_history_and_cites(
    fake_openai: tuple[FakeOpenAI, str],
) -> None:
    server, url = fake_openai
    answerer = LLMAnswerer(OpenAICompatibleLLM(base_url=url, model="chat"), ExtractiveAnswerer())
    history = [Turn("user", "前の質問"), Turn("assistant", "前の答え")]
    result = await answerer.answer("りゅうおうのHPは？", [TABLE_HIT], history)
    assert result.generated and result.text == server.reply
    assert [c.number for c in result.citations] == [1]
    body = server.requests[-1][1]
    roles = [message["role"] for message in body["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert "[1] (Title https://example.com/monsters)" in body["messages"][-1]["content"]
    assert "りゅうおうのHPは？" in body["messages"][-1]["content"]


async def test_llm_down_falls_back_to_extractive(fake_openai: tuple[FakeOpenAI, str]) -> None:
    server, url = fake_openai
    server.fail_next = 10
    llm = OpenAICompatibleLLM(base_url=url, model="chat", max_retries=0)
    result = await LLMAnswerer(llm, ExtractiveAnswerer()).answer("りゅうおう", [TABLE_HIT])
    assert not result.generated and result.note == "llm_unavailable"
    assert "りゅうおう" in result.text
    assert "LLM に接続できなかった" in format_answer("ja", result)


@pytest.mark.parametrize("locale", ["ja", "en"])
def test_answer_without_citations_renders_text_only(locale: str) -> None:
    assert format_answer(locale, Answer("plain")) == "plain"
