"""Re-embed every stored chunk with the configured model (after changing EMBEDDING_*)."""

from __future__ import annotations

from bot.services import build_embedder
from config.settings import Settings
from storage.knowledge_base import KnowledgeBase

BATCH = 256


async def reindex(settings: Settings) -> str:
    """Embed all chunks first, then swap the vectors in one transaction: a failure midway
    leaves the old, consistent vectors in place."""
    embedder = build_embedder(settings)
    kb = KnowledgeBase(settings.shiori_db_path)
    try:
        chunks = kb.indexed_chunks()
        batches = []
        for start in range(0, len(chunks), BATCH):
            part = chunks[start : start + BATCH]
            vectors = await embedder.embed_documents([chunk.indexed_text for chunk in part])
            batches.append(([chunk.id for chunk in part], vectors))
        count = kb.replace_embeddings(embedder.name, await embedder.dimension(), iter(batches))
    finally:
        kb.close()
    return f"re-embedded {count} chunks with {embedder.name}"
