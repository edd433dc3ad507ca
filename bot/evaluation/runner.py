"""Runs a dataset's queries through the search engine and scores the document rankings."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from bot.evaluation.dataset import Dataset
from bot.evaluation.metrics import ndcg_at_k, percentile, recall_at_k, reciprocal_rank_at_k
from bot.ingest.local import corpus_url
from bot.providers.embedders import Embedder, Matrix
from bot.search.engine import SearchEngine

# Chunks asked per query: chunks collapse to fewer documents, so Recall@100 is a lower bound.
EVAL_DEPTH = 100


class PrecomputedQueries:
    """Embeds each query once, timed, then serves the vectors to every mode compared.

    Modes differ only after the query is embedded, so embedding thousands of questions once
    per mode would only burn time; its latency is reported on its own.
    """

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.name = inner.name
        self._vectors: dict[str, Matrix] = {}
        self.latencies_ms: list[float] = []

    async def prepare(self, texts: list[str]) -> None:
        for text in texts:
            if text not in self._vectors:
                started = time.perf_counter()
                self._vectors[text] = await self._inner.embed_query(text)
                self.latencies_ms.append((time.perf_counter() - started) * 1000)

    async def dimension(self) -> int:
        return await self._inner.dimension()

    async def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return await self._inner.embed_documents(texts)

    async def embed_query(self, text: str) -> Matrix:
        cached = self._vectors.get(text)
        return cached if cached is not None else await self._inner.embed_query(text)

    async def is_available(self) -> bool:
        return await self._inner.is_available()


@dataclass(frozen=True, slots=True)
class Report:
    dataset: str
    split: str
    mode: str
    fusion: str
    vector_weight: float
    queries: int
    ndcg_at_10: float
    mrr_at_10: float
    recall_at_10: float
    recall_at_100: float
    search_p50_ms: float
    search_p95_ms: float
    embed_p50_ms: float
    embed_p95_ms: float

    def table_row(self) -> str:
        return (
            f"{self.dataset:<16} {self.mode:<7} {self.fusion:<4} α={self.vector_weight:<4} "
            f"nDCG@10 {self.ndcg_at_10:.3f}  MRR@10 {self.mrr_at_10:.3f}  "
            f"R@10 {self.recall_at_10:.3f}  R@100 {self.recall_at_100:.3f}  "
            f"search p50/p95 {self.search_p50_ms:.1f}/{self.search_p95_ms:.1f} ms  "
            f"embed p50/p95 {self.embed_p50_ms:.1f}/{self.embed_p95_ms:.1f} ms"
        )

    def write_json(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n")


def documents_ranked(urls: list[str], prefix: str) -> list[str]:
    """Corpus ids in order of their best chunk (each id once)."""
    seen: dict[str, None] = {}
    for url in urls:
        if url.startswith(prefix):
            seen.setdefault(url[len(prefix) :], None)
    return list(seen)


async def evaluate(
    engine: SearchEngine, dataset: Dataset, split: str, queries: PrecomputedQueries
) -> Report:
    """Score `engine` on `dataset`; `queries` must be the embedder the engine was built with."""
    if engine.config.mode != "keyword":
        await queries.prepare([query.text for query in dataset.queries])
    prefix = corpus_url(dataset.name, "")
    ndcg, mrr, recall10, recall100, latencies = [], [], [], [], []
    for query in dataset.queries:
        started = time.perf_counter()
        result = await engine.search(query.text, n_results=EVAL_DEPTH)
        latencies.append((time.perf_counter() - started) * 1000)
        ranking = documents_ranked([hit.chunk.source_url for hit in result.hits], prefix)
        relevant = dataset.qrels[query.id]
        ndcg.append(ndcg_at_k(ranking, relevant, 10))
        mrr.append(reciprocal_rank_at_k(ranking, relevant, 10))
        recall10.append(recall_at_k(ranking, relevant, 10))
        recall100.append(recall_at_k(ranking, relevant, 100))
    count = max(len(dataset.queries), 1)
    config = engine.config
    return Report(
        dataset=dataset.name,
        split=split,
        mode=config.mode,
        fusion=config.fusion if config.mode == "hybrid" else "-",
        vector_weight=config.vector_weight,
        queries=len(dataset.queries),
        ndcg_at_10=sum(ndcg) / count,
        mrr_at_10=sum(mrr) / count,
        recall_at_10=sum(recall10) / count,
        recall_at_100=sum(recall100) / count,
        search_p50_ms=percentile(latencies, 0.5),
        search_p95_ms=percentile(latencies, 0.95),
        embed_p50_ms=percentile(queries.latencies_ms, 0.5),
        embed_p95_ms=percentile(queries.latencies_ms, 0.95),
    )
