"""Retrieval metrics over ranked ids and graded judgements (pure functions).

nDCG uses linear gains (grade / log2(rank + 1)), as trec_eval and BEIR do. Precision is
over what was retrieved, not capped at expected/n: a capped precision saturates and cannot
tell configurations apart (a pitfall measured in the seed project).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


def ndcg_at_k(ranking: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    dcg = sum(
        relevant.get(doc_id, 0) / math.log2(rank + 1) for rank, doc_id in enumerate(ranking[:k], 1)
    )
    ideal_grades = sorted(relevant.values(), reverse=True)[:k]
    ideal = sum(grade / math.log2(rank + 1) for rank, grade in enumerate(ideal_grades, 1))
    return dcg / ideal if ideal > 0 else 0.0


def reciprocal_rank_at_k(ranking: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    for rank, doc_id in enumerate(ranking[:k], 1):
        if relevant.get(doc_id, 0) > 0:
            return 1.0 / rank
    return 0.0


def recall_at_k(ranking: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    wanted = {doc_id for doc_id, grade in relevant.items() if grade > 0}
    if not wanted:
        return 0.0
    return len(wanted.intersection(ranking[:k])) / len(wanted)


@dataclass(frozen=True, slots=True)
class PrecisionRecall:
    precision: float
    recall: float
    f1: float


def precision_recall(retrieved: Sequence[str], expected: Sequence[str]) -> PrecisionRecall:
    """Set precision/recall/F1 of `retrieved` (duplicates counted once) against `expected`."""
    got, want = set(retrieved), set(expected)
    hits = len(got & want)
    precision = hits / len(got) if got else 0.0
    recall = hits / len(want) if want else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PrecisionRecall(precision, recall, f1)


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))
    return ordered[index]
