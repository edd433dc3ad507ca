"""The seed project's own evaluation set: expected and negative sources per question,
precision/recall/F1, nDCG and MRR over the top `n` sources, and a baseline regression check.

    python main.py eval-seed --dataset ../shared/data/seed-fixtures \
        --baseline benchmarks/seed-baseline.json --fail-on-regression
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from bot.errors import ShioriError
from bot.evaluation.build import eval_db_path
from bot.evaluation.metrics import ndcg_at_k, precision_recall, reciprocal_rank_at_k
from bot.ingest.pipeline import Document, Ingestor
from bot.search.engine import SearchConfig, SearchEngine
from bot.services import build_embedder
from config.settings import Settings
from storage.knowledge_base import KnowledgeBase

DATASET_FILE = "rag_evaluation_dataset.json"
DOCUMENTS_FILE = "rag_test_documents.json"
WATCHED = ("f1", "ndcg", "mrr")


@dataclass(frozen=True, slots=True)
class SeedReport:
    queries: int
    n_results: int
    precision: float
    recall: float
    f1: float
    ndcg: float
    mrr: float
    negative_hits: int


@dataclass(frozen=True, slots=True)
class SeedQuery:
    text: str
    expected: list[str]
    negative: list[str]


def _load(root: Path) -> tuple[list[SeedQuery], list[Document]]:
    try:
        dataset = json.loads((root / DATASET_FILE).read_text(encoding="utf-8"))
        documents = json.loads((root / DOCUMENTS_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ShioriError(f"not a seed evaluation folder ({root}): {exc}") from exc
    docs = [
        Document(str(d["source_url"]), str(d.get("title", "")), str(d["content"]))
        for d in documents["documents"]
    ]
    queries = [
        SeedQuery(
            str(q["query"]),
            [str(url) for url in q["expected_sources"]],
            [str(url) for url in q.get("negative_sources", [])],
        )
        for q in dataset["queries"]
    ]
    return queries, docs


async def evaluate_seed(settings: Settings, root: Path, n_results: int) -> SeedReport:
    queries, documents = _load(root)
    embedder = build_embedder(settings)
    size, overlap = settings.rag_chunk_size, settings.rag_chunk_overlap
    kb = KnowledgeBase(eval_db_path("seed-fixtures", embedder.name, size, overlap))
    try:
        kb.bind_embedding(embedder.name, await embedder.dimension())
        ingestor = Ingestor(kb, embedder, chunk_size=size, chunk_overlap=overlap)
        await ingestor.ingest_many(documents)
        engine = SearchEngine(kb, embedder, SearchConfig.from_settings(settings))
        totals = dict.fromkeys(("precision", "recall", "f1", "ndcg", "mrr"), 0.0)
        negatives = 0
        for query in queries:
            result = await engine.search(query.text, n_results=n_results)
            sources = list(dict.fromkeys(hit.chunk.source_url for hit in result.hits))
            relevant = dict.fromkeys(query.expected, 1)
            scores = precision_recall(sources, query.expected)
            totals["precision"] += scores.precision
            totals["recall"] += scores.recall
            totals["f1"] += scores.f1
            totals["ndcg"] += ndcg_at_k(sources, relevant, n_results)
            totals["mrr"] += reciprocal_rank_at_k(sources, relevant, n_results)
            negatives += len(set(sources) & set(query.negative))
    finally:
        kb.close()
    count = max(len(queries), 1)
    return SeedReport(
        queries=len(queries),
        n_results=n_results,
        negative_hits=negatives,
        **{name: value / count for name, value in totals.items()},
    )


def regressions(report: SeedReport, baseline: dict[str, float], threshold: float) -> list[str]:
    """Metrics that fell more than `threshold` below the baseline."""
    current = asdict(report)
    return [
        f"{name}: {current[name]:.3f} < baseline {baseline[name]:.3f} - {threshold}"
        for name in WATCHED
        if name in baseline and current[name] < baseline[name] - threshold
    ]


async def run_seed_eval(settings: Settings, args: argparse.Namespace) -> int:
    report = await evaluate_seed(settings, args.dataset, args.n_results)
    print(
        f"seed-fixtures  queries {report.queries}  top {report.n_results}: "
        f"P {report.precision:.3f}  R {report.recall:.3f}  F1 {report.f1:.3f}  "
        f"nDCG {report.ndcg:.3f}  MRR {report.mrr:.3f}  negative sources hit {report.negative_hits}"
    )
    if args.save_baseline:
        args.baseline.parent.mkdir(parents=True, exist_ok=True)
        args.baseline.write_text(json.dumps(asdict(report), indent=2) + "\n")
        print(f"baseline saved: {args.baseline}")
        return 0
    if args.baseline is None:
        return 0
    failed = regressions(report, json.loads(args.baseline.read_text()), args.regression_threshold)
    for line in failed:
        print(f"REGRESSION {line}")
    return 1 if failed and args.fail_on_regression else 0
