import pytest

from bot.search.fusion import convex_combination, min_max, ranked, reciprocal_rank_fusion


def test_min_max_scales_and_handles_ties() -> None:
    assert min_max({1: 2.0, 2: 4.0, 3: 3.0}) == {1: 0.0, 2: 1.0, 3: 0.5}
    assert min_max({1: 5.0, 2: 5.0}) == {1: 1.0, 2: 1.0}
    assert min_max({}) == {}


def test_convex_combination_weights_and_missing_side() -> None:
    fused = convex_combination({1: 0.9, 2: 0.5}, {2: 10.0, 3: 2.0}, vector_weight=0.75)
    assert fused[1] == pytest.approx(0.75)  # vector only
    assert fused[2] == pytest.approx(0.25)  # worst vector, best keyword
    assert fused[3] == pytest.approx(0.0)


def test_no_keyword_hits_caps_score_at_alpha() -> None:
    fused = convex_combination({1: 0.8, 2: 0.4}, {}, vector_weight=0.6)
    assert max(fused.values()) == pytest.approx(0.6)


def test_vector_weight_out_of_range() -> None:
    with pytest.raises(ValueError, match="vector_weight"):
        convex_combination({}, {}, 1.2)


def test_rrf_rewards_agreement_and_respects_weights() -> None:
    fused = reciprocal_rank_fusion([[1, 2, 3], [2, 1, 4]], k=60)
    assert fused[1] == pytest.approx(fused[2])
    assert fused[1] > fused[3] > 0
    weighted = reciprocal_rank_fusion([[1, 2], [2, 1]], weights=[2.0, 0.0], k=60)
    assert ranked(weighted)[0][0] == 1
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([[1]], weights=[1.0, 2.0])


def test_ranked_breaks_ties_by_id() -> None:
    assert ranked({3: 1.0, 1: 1.0, 2: 2.0}) == [(2, 2.0), (1, 1.0), (3, 1.0)]
