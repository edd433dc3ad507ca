"""`main.py eval`: build or reuse the dataset's knowledge base, then score each mode."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from bot.evaluation.build import build_corpus_db
from bot.evaluation.dataset import load_dataset
from bot.evaluation.runner import PrecomputedQueries, Report, evaluate
from bot.search.engine import SearchConfig, SearchEngine
from bot.services import build_embedder
from config.settings import Settings

MODES: dict[str, tuple[str, str]] = {
    "keyword": ("keyword", "cc"),
    "vector": ("vector", "cc"),
    "hybrid-cc": ("hybrid", "cc"),
    "hybrid-rrf": ("hybrid", "rrf"),
}


async def run_eval(settings: Settings, args: argparse.Namespace) -> int:
    dataset = load_dataset(args.dataset, args.split)
    chunk_size = args.chunk_size or settings.rag_chunk_size
    chunk_overlap = (
        args.chunk_overlap if args.chunk_overlap is not None else settings.rag_chunk_overlap
    )
    embedder = PrecomputedQueries(build_embedder(settings))
    kb = await build_corpus_db(
        dataset.corpus, dataset.name, embedder, chunk_size=chunk_size, chunk_overlap=chunk_overlap
    )
    try:
        base = SearchConfig.from_settings(settings)
        if args.vector_weight is not None:
            base = dataclasses.replace(base, vector_weight=args.vector_weight)
        modes = [args.mode] if args.mode else list(MODES)
        reports: list[Report] = []
        for name in modes:
            mode, fusion = MODES[name]
            config = dataclasses.replace(base, mode=mode, fusion=fusion)  # type: ignore[arg-type]
            engine = SearchEngine(kb, embedder, config)
            report = await evaluate(engine, dataset, args.split, embedder)
            reports.append(report)
            print(report.table_row(), flush=True)
        output = args.output or Path("reports") / f"eval-{dataset.name}-{args.split}.json"
        output.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "chunk_size": chunk_size,
            "chunk_overlap": chunk_overlap,
            "embedding_model": embedder.name,
            "results": [dataclasses.asdict(report) for report in reports],
        }
        output.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        print(f"report: {output}")
    finally:
        kb.close()
    return 0
