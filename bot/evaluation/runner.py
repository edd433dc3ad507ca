"""Runs a dataset's queries through the search engine and scores the document rankings."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bot.evaluation.dataset import Dataset
from bot.evaluation.metrics import ndcg_at_k, percentile, recall_at_k, reciprocal_rank_at_k
from bot.ingest.local import corpus_url
from bot.search.engine import SearchEngine

# Chunks asked per query: chunks collapse to fewer documents, so Recall@100 is a lower bound.
EVAL_DEPTH = 100


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
    latency_p50_ms: float
    latency_p95_ms: float

    def table_row(self) -> str:
        return (
            f"{self.dataset:<16} {self.mode:<7} {self.fusion:<4} α={self.vector_weight:<4} "
            f"nDCG@10 {self.ndcg_at_10:.3f}  MRR@10 {self.mrr_at_10:.3f}  "
            f"R@10 {self.recall_at_10:.3f}  R@100 {self.recall_at_100:.3f}  "
            f"p50 {self.latency_p50_ms:.1f} ms  p95 {self.latency_p95_ms:.1f} ms"
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


async def evaluate(engine: SearchEngine, dataset: Dataset, split: str) -> Report:
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
        latency_p50_ms=percentile(latencies, 0.5),
        latency_p95_ms=percentile(latencies, 0.95),
    )
