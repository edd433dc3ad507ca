"""BEIR layout: `corpus.jsonl`, `queries.jsonl`, `qrels/<split>.tsv`."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from bot.errors import ShioriError


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    text: str


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    root: Path
    queries: list[Query]
    qrels: dict[str, dict[str, int]]

    @property
    def corpus(self) -> Path:
        return self.root / "corpus.jsonl"


def load_dataset(root: Path, split: str = "test") -> Dataset:
    """Queries that have judgements in `split`, with those judgements (grade > 0)."""
    qrels_path = root / "qrels" / f"{split}.tsv"
    for required in (root / "corpus.jsonl", root / "queries.jsonl", qrels_path):
        if not required.is_file():
            raise ShioriError(f"not a BEIR dataset: {required} is missing")
    qrels: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            grade = int(row["score"])
            if grade > 0:
                qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = grade
    queries = []
    with (root / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                entry = json.loads(line)
                if str(entry["_id"]) in qrels:
                    queries.append(Query(str(entry["_id"]), str(entry["text"])))
    return Dataset(root.name, root, queries, qrels)
