"""Score fusion over plain `{chunk_id: score}` maps (pure: no database, no Slack).

Two families, chosen by name in settings:
- convex combination (CC) of min-max normalized scores (seed 002, Bruch et al. 2210.11934):
  keeps how far apart scores are, not only their order;
- weighted reciprocal rank fusion (RRF, seed 001 §5.1): uses ranks only, robust to scores on
  unrelated scales.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def min_max(scores: Mapping[int, float]) -> dict[int, float]:
    """Scale to 0..1; when every score is equal they all become 1.0 (seed 002)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high == low:
        return dict.fromkeys(scores, 1.0)
    span = high - low
    return {key: (value - low) / span for key, value in scores.items()}


def convex_combination(
    vector: Mapping[int, float], keyword: Mapping[int, float], vector_weight: float
) -> dict[int, float]:
    """α·minmax(vector) + (1−α)·minmax(keyword); a side that missed a chunk gives it 0.

    `vector` holds similarities (higher is better), `keyword` BM25 scores.
    """
    if not 0.0 <= vector_weight <= 1.0:
        raise ValueError(f"vector_weight must be within 0..1, got {vector_weight}")
    norm_vector, norm_keyword = min_max(vector), min_max(keyword)
    return {
        key: vector_weight * norm_vector.get(key, 0.0)
        + (1.0 - vector_weight) * norm_keyword.get(key, 0.0)
        for key in norm_vector.keys() | norm_keyword.keys()
    }


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[int]], weights: Sequence[float] | None = None, k: int = 60
) -> dict[int, float]:
    """Σ weight / (k + rank) over the rankings a chunk appears in (rank starts at 1)."""
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    if k < 1:
        raise ValueError("k must be at least 1")
    fused: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, key in enumerate(ranking, 1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused


def ranked(scores: Mapping[int, float]) -> list[tuple[int, float]]:
    """Best first; ties broken by id so results are reproducible."""
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
