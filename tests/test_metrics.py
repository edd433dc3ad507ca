import math

import pytest

from bot.evaluation.metrics import (
    ndcg_at_k,
    percentile,
    precision_recall,
    recall_at_k,
    reciprocal_rank_at_k,
)


def test_ndcg_perfect_and_shifted() -> None:
    relevant = {"a": 1, "b": 1}
    assert ndcg_at_k(["a", "b", "c"], relevant, 10) == pytest.approx(1.0)
    # a at rank 2, b missing: DCG 1/log2(3) against the ideal 1 + 1/log2(3)
    expected = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["c", "a"], relevant, 10) == pytest.approx(expected)
    assert ndcg_at_k(["x"], relevant, 10) == 0.0


def test_ndcg_uses_grades() -> None:
    assert ndcg_at_k(["b", "a"], {"a": 2, "b": 1}, 10) < ndcg_at_k(["a", "b"], {"a": 2, "b": 1}, 10)


def test_mrr_and_recall_cutoffs() -> None:
    assert reciprocal_rank_at_k(["x", "y", "a"], {"a": 1}, 10) == pytest.approx(1 / 3)
    assert reciprocal_rank_at_k(["x", "y", "a"], {"a": 1}, 2) == 0.0
    assert recall_at_k(["a", "x", "b"], {"a": 1, "b": 1}, 2) == 0.5


def test_precision_is_not_capped() -> None:
    # Five retrieved, one right: precision 0.2 whatever the number expected.
    result = precision_recall(["a", "b", "c", "d", "e"], ["a"])
    assert result.precision == pytest.approx(0.2)
    assert result.recall == 1.0
    assert result.f1 == pytest.approx(2 * 0.2 / 1.2)
    assert precision_recall([], ["a"]).f1 == 0.0


def test_percentile() -> None:
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 0.5) == 3.0
    assert percentile(list(range(1, 101)), 0.95) == 95
    assert percentile([], 0.5) == 0.0
