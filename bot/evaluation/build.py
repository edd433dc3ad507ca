"""Build, or reuse, a knowledge base holding a BEIR corpus.

Embedding a corpus takes minutes to an hour on 2 cores, so the file is kept under
`.cache/eval/` keyed by dataset, model and chunking; a rerun skips every document already
stored (content hashes), which also resumes an interrupted build.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from bot.ingest.local import read_corpus
from bot.ingest.pipeline import EventKind, Ingestor, ProgressEvent
from bot.providers.embedders import Embedder
from storage.knowledge_base import KnowledgeBase

CACHE_DIR = Path(".cache/eval")


def eval_db_path(dataset: str, embedder_name: str, chunk_size: int, chunk_overlap: int) -> Path:
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", embedder_name).strip("-")
    return CACHE_DIR / f"{dataset}-{slug}-c{chunk_size}-o{chunk_overlap}.sqlite"


async def build_corpus_db(
    corpus: Path,
    dataset: str,
    embedder: Embedder,
    *,
    chunk_size: int,
    chunk_overlap: int,
    db_path: Path | None = None,
) -> KnowledgeBase:
    """Open (creating or completing) the evaluation knowledge base for `corpus`."""
    path = db_path or eval_db_path(dataset, embedder.name, chunk_size, chunk_overlap)
    kb = KnowledgeBase(path)
    kb.bind_embedding(embedder.name, await embedder.dimension())
    ingestor = Ingestor(kb, embedder, chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    started = time.monotonic()
    seen = 0

    def progress(event: ProgressEvent) -> None:
        nonlocal seen
        seen += 1
        if event.kind is EventKind.FAILED:
            print(f"  failed {event.url}: {event.error}", file=sys.stderr)
        if seen % 200 == 0:
            rate = seen / max(time.monotonic() - started, 1e-9)
            print(f"  {dataset}: {seen} documents ({rate:.1f}/s)", file=sys.stderr, flush=True)

    summary = await ingestor.ingest_many(read_corpus(corpus, dataset), progress=progress)
    if summary.stored:
        print(
            f"  {dataset}: stored {summary.stored} documents / {summary.chunks} chunks "
            f"in {time.monotonic() - started:.0f} s",
            file=sys.stderr,
        )
    return kb
