"""The search pipeline: query embedding, then keyword and vector retrieval in parallel, fusion.

The query is embedded first, alone, on every core; token BM25, phrase BM25 and the vector
product then run side by side (SQLite and numpy release the GIL). Starting BM25 during the
embedding measured no better at 100k chunks on 2 cores (README), and it kept the two
fighting for the same cores. Every stage is timed, so slow answers can be traced to the
stage that caused them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field, replace
from typing import TypeVar

from bot.providers.embedders import Embedder
from bot.search.fusion import convex_combination, min_max, ranked, reciprocal_rank_fusion
from config.settings import FusionMethod, SearchMode, Settings
from storage.keyword import Bm25Params, merge_hits
from storage.knowledge_base import KnowledgeBase
from storage.records import ScoredId, StoredChunk

logger = logging.getLogger(__name__)

MIN_FETCH = 30
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SearchConfig:
    mode: SearchMode = "hybrid"
    fusion: FusionMethod = "cc"
    n_results: int = 5
    vector_weight: float = 0.5
    rrf_k: int = 60
    similarity_threshold: float | None = None
    min_combined_score: float | None = None
    bm25: Bm25Params = field(default_factory=Bm25Params)
    debug_log: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> SearchConfig:
        return cls(
            mode=settings.rag_search_mode,
            fusion=settings.rag_fusion_method,
            n_results=settings.rag_retrieval_count,
            vector_weight=settings.rag_vector_weight,
            rrf_k=settings.rag_rrf_k,
            similarity_threshold=settings.rag_similarity_threshold,
            min_combined_score=settings.rag_min_combined_score,
            bm25=Bm25Params(
                settings.rag_bm25_k1,
                settings.rag_bm25_b,
                settings.rag_keyword_max_df,
                settings.rag_keyword_candidate_max_chunks,
            ),
            debug_log=settings.rag_debug_log_enabled,
        )


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A chunk with every score that placed it (seed 002 `HybridSearchResult`)."""

    chunk: StoredChunk
    vector_distance: float | None
    bm25_score: float | None
    combined_score: float


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    hits: list[SearchHit]
    timings_ms: dict[str, float]


def fetch_count(n_results: int) -> int:
    """Candidates per retriever: enough for min-max normalization to be stable (seed 002)."""
    return max(3 * n_results, MIN_FETCH)


async def _timed(timings: dict[str, float], name: str, work: Awaitable[T]) -> T:
    started = time.perf_counter()
    result = await work
    timings[name] = (time.perf_counter() - started) * 1000
    return result


async def _nothing() -> list[ScoredId]:
    return []


class SearchEngine:
    """Keyword (FTS5 BM25), vector (cosine) and hybrid search over the knowledge base."""

    def __init__(self, kb: KnowledgeBase, embedder: Embedder, config: SearchConfig) -> None:
        self._kb = kb
        self._embedder = embedder
        self.config = config

    def with_config(self, **changes: object) -> SearchEngine:
        return SearchEngine(self._kb, self._embedder, replace(self.config, **changes))  # type: ignore[arg-type]

    async def search(self, query: str, n_results: int | None = None) -> SearchResult:
        config = self.config
        n = n_results or config.n_results
        fetch = fetch_count(n)
        timings: dict[str, float] = {}
        started = time.perf_counter()
        embedding = (
            await _timed(timings, "embed_query", self._embedder.embed_query(query))
            if config.mode in ("vector", "hybrid")
            else None
        )
        keyword_work = (
            _timed(timings, "keyword", self._search_keyword(query, fetch))
            if config.mode in ("keyword", "hybrid")
            else _nothing()
        )
        vector_work = (
            _timed(timings, "vector", asyncio.to_thread(self._kb.search_vector, embedding, fetch))
            if embedding is not None
            else _nothing()
        )
        keyword_hits, vector_hits = await asyncio.gather(keyword_work, vector_work)

        fuse_started = time.perf_counter()
        if config.similarity_threshold is not None:
            vector_hits = [h for h in vector_hits if h.score <= config.similarity_threshold]
        scored = self._fuse(vector_hits, keyword_hits)
        timings["fusion"] = (time.perf_counter() - fuse_started) * 1000

        distances = {hit.chunk_id: hit.score for hit in vector_hits}
        bm25 = {hit.chunk_id: hit.score for hit in keyword_hits}
        top = scored[:n]
        chunks = {chunk.id: chunk for chunk in self._kb.chunks([chunk_id for chunk_id, _ in top])}
        hits = [
            SearchHit(chunks[chunk_id], distances.get(chunk_id), bm25.get(chunk_id), score)
            for chunk_id, score in top
            if chunk_id in chunks
        ]
        timings["total"] = (time.perf_counter() - started) * 1000
        result = SearchResult(query, hits, timings)
        if config.debug_log:
            _log_result(result)
        return result

    async def _search_keyword(self, query: str, fetch: int) -> list[ScoredId]:
        token, phrase = await asyncio.gather(
            asyncio.to_thread(self._kb.search_tokens, query, fetch, self.config.bm25),
            asyncio.to_thread(self._kb.search_phrases, query, fetch, self.config.bm25),
        )
        return merge_hits(token, phrase, fetch)

    def _fuse(
        self, vector_hits: list[ScoredId], keyword_hits: list[ScoredId]
    ) -> list[tuple[int, float]]:
        config = self.config
        similarity = {hit.chunk_id: 1.0 - hit.score for hit in vector_hits}
        keyword = {hit.chunk_id: hit.score for hit in keyword_hits}
        if config.mode == "vector":
            return ranked(similarity)
        if config.mode == "keyword":
            return ranked(min_max(keyword))
        if config.fusion == "rrf":
            weights = [2 * config.vector_weight, 2 * (1 - config.vector_weight)]
            rankings = [[h.chunk_id for h in vector_hits], [h.chunk_id for h in keyword_hits]]
            return ranked(reciprocal_rank_fusion(rankings, weights, config.rrf_k))
        fused = ranked(convex_combination(similarity, keyword, config.vector_weight))
        if config.min_combined_score is not None:
            fused = [(key, score) for key, score in fused if score >= config.min_combined_score]
        return fused


def _log_result(result: SearchResult) -> None:
    """Seed 002's debug log: query and each hit's scores at INFO, text preview at DEBUG."""
    logger.info("RAG retrieve: query=%r", result.query)
    for rank, hit in enumerate(result.hits, 1):
        logger.info(
            "RAG result %d: distance=%s bm25=%s combined=%.3f source=%r",
            rank,
            "-" if hit.vector_distance is None else f"{hit.vector_distance:.3f}",
            "-" if hit.bm25_score is None else f"{hit.bm25_score:.3f}",
            hit.combined_score,
            hit.chunk.source_url,
        )
        logger.debug("RAG result %d text: %r", rank, hit.chunk.text[:100])
