"""Confidence gate, (floor, tau) surface, Pareto frontier, Learn-then-Test pair, cascade, label agreement."""

from __future__ import annotations

import numpy as np
import pytest

from nomad_lab.gate import confidence as cg
from nomad_lab.gate import masks
from nomad_lab.gate.agreement import (
    agreement,
    cohen_kappa,
    expected_calibration_error,
    reliability,
    roc_auc,
)
from nomad_lab.gate.operating_curves import curve_from_mask
from nomad_lab.gate.pools import pools_from_records
from tests.support.dumps import random_records


def pool(i: int, refusal: bool, top: float) -> dict:
    docs = [] if refusal else [f"d{i}"]
    return {
        "id": f"q{i}",
        "tags": ["off-topic" if refusal else "single-hop"],
        "expectRefusal": refusal,
        "relevantDocIds": docs,
        "candidates": [{"docId": f"d{i}", "score": top, "semanticScore": top}],
    }


# Four answerable pools (tops 0.9, 0.8, 0.5, 0.4) and four refusals (tops 0.85, 0.6, 0.45, 0.3).
POOLS = pools_from_records(
    [pool(i, False, t) for i, t in enumerate([0.9, 0.8, 0.5, 0.4])]
    + [pool(4 + i, True, t) for i, t in enumerate([0.85, 0.6, 0.45, 0.3])]
)
P_TRUE = np.array([0.9, 0.2, 0.7, np.nan, 0.1, 0.3, 0.8, 0.05])


def test_confidence_gate_drops_below_tau_and_keeps_unknown() -> None:
    keep = cg.confidence_gate(POOLS, P_TRUE, [0.0, 0.5, 1.0]).any(axis=2)
    assert keep[0].all()
    assert keep[1].tolist() == [True, False, True, True, False, False, True, False]
    assert keep[2].tolist() == [False, False, False, True, False, False, False, False]  # NaN fails open
    with pytest.raises(ValueError, match="expected 8"):
        cg.confidence_gate(POOLS, P_TRUE[:3], [0.5])


def test_surface_cells_match_composing_the_gates_by_hand() -> None:
    result = cg.surface(POOLS, P_TRUE, [0.0, 0.55], [0.0, 0.5])
    # floor 0.55, tau 0.5: only q0 answerable survives (q1 has P 0.2); refusals q4 (P .1), q5 (P .3) drop
    assert result.recall[1, 1] == pytest.approx(1 / 4)
    assert result.leak[1, 1] == pytest.approx(0.0)
    assert result.leak[0, 0] == pytest.approx(1.0) and result.recall[0, 0] == pytest.approx(1.0)
    # the same as the floor and the judge's verdict (P >= tau) composed by hand
    verdicts = [np.nan if np.isnan(p) else p >= 0.5 for p in P_TRUE]
    keep = masks.both(masks.score_floor(POOLS, [0.55]), masks.judge(POOLS, verdicts))
    curve = curve_from_mask(POOLS, keep, np.array([0.55]), "floor@0.55+judge", masks.DEFAULT_K)
    assert curve.leak[0] == pytest.approx(result.leak[1, 1]) and curve.recall[0] == pytest.approx(
        result.recall[1, 1]
    )


def test_pareto_frontier_holds_only_undominated_cells() -> None:
    result = cg.surface(POOLS, P_TRUE, np.round(np.arange(0, 1, 0.05), 2), cg.TAU_GRID)
    front = result.pareto()
    points = [(result.leak[c], result.recall[c]) for c in front]
    assert points == sorted(points)
    for lk, rc in points:
        assert not ((result.leak < lk) & (result.recall >= rc)).any()
        assert not ((result.leak <= lk) & (result.recall > rc)).any()


def test_calibrated_pair_is_certified_only_with_enough_refusals() -> None:
    few = cg.calibrated_pair(cg.surface(POOLS, P_TRUE, [0.0, 0.5], cg.TAU_GRID), alpha=0.05)
    assert few.floor is None and "no (floor, tau)" in few.message  # 4 refusals certify nothing
    records = random_records(3, n=400)
    pools = pools_from_records(records)
    p = np.where(pools.expect_refusal, 0.1, 0.9)  # a perfect judge: every refusal dropped at tau 0.5
    pair = cg.calibrated_pair(cg.surface(pools, p, [0.0, 0.5], cg.TAU_GRID), alpha=0.05)
    assert pair.floor is not None and pair.leak == 0.0 and 0.1 < pair.tau <= 0.9
    # the bound is exact binomial: 0 of n refusals certifies alpha when (1-alpha)^n <= 0.05 / 2 floors
    n = int(pools.expect_refusal.sum())
    assert cg.binomial_p_value(0, n, 0.05) == pytest.approx(0.95**n)


def test_cascade_calls_only_the_ambiguous_band() -> None:
    row, leaked, recall = cg.cascade(POOLS, P_TRUE, low=0.42, high=0.82, tau=0.5)
    # tops in [0.42, 0.82): q1 0.8, q2 0.5, q5 0.6, q6 0.45 -> 4 calls
    assert row.calls == 4
    # kept: q0 (>= high), q2 (P .7), q4 (0.85 >= high), q6 (P .8); dropped q3, q7 (< low), q1, q5 (P < tau)
    assert leaked.tolist() == [True, False, True, False]
    assert recall.tolist() == [1.0, 0.0, 1.0, 0.0]
    every, cheapest, _ = cg.cascade_savings(POOLS, P_TRUE, 0.5, [-np.inf, 0.42, 0.82, np.inf])
    assert every.calls == 8
    assert cheapest is not None and cheapest.calls <= every.calls
    assert cheapest.leak <= every.leak and cheapest.recall >= every.recall


def test_agreement_metrics_against_hand_computed_values() -> None:
    gold = np.array([1, 1, 1, 0, 0, 0])
    verdict = np.array([1, 1, 0, 0, 0, 1])
    assert cohen_kappa(gold, verdict) == pytest.approx((4 / 6 - 0.5) / 0.5)
    score = np.array([0.9, 0.8, 0.3, 0.2, 0.3, 0.7])
    # pairs (pos > neg): 0.9 beats 3, 0.8 beats 3, 0.3 beats 0.2 and ties 0.3 -> 7.5 / 9
    assert roc_auc(gold, score) == pytest.approx(7.5 / 9)
    bins = reliability(gold, score, bins=2)
    assert bins == [(pytest.approx(0.8 / 3), 1 / 3, 3), (pytest.approx(0.8), 2 / 3, 3)]
    assert expected_calibration_error(gold, score, bins=2) == pytest.approx(
        (3 * abs(0.8 / 3 - 1 / 3) + 3 * abs(0.8 - 2 / 3)) / 6
    )
    result = agreement(np.r_[gold, -1], np.r_[verdict, 1], np.r_[score, 0.5], resamples=200)
    assert result.n == 6  # the no-relevant class is left out
    assert result.accuracy[0] == pytest.approx(4 / 6) and result.accuracy[1] <= 4 / 6 <= result.accuracy[2]
    assert result.accept_rate_on_topic == pytest.approx(
        2 / 3
    ) and result.accept_rate_off_topic == pytest.approx(1 / 3)


def test_an_always_true_judge_has_zero_kappa_and_no_separation() -> None:
    gold = np.array([1, 0, 1, 0])
    assert np.isnan(cohen_kappa(gold, np.ones(4))) or cohen_kappa(gold, np.ones(4)) == 0.0
    assert roc_auc(gold, np.full(4, 0.6)) == 0.5
    assert masks.DEFAULT_K == 5


def test_compositions_pick_the_lowest_leak_at_the_recall_target() -> None:
    table = cg.compositions(POOLS, P_TRUE, min_recall=0.75)
    # floor alone: recall >= 0.75 needs floor <= 0.5 (tops .9 .8 .5), leaking .85 and .6: first at floor .46
    assert table["floor"]["setting"] == "floor 0.46"
    assert table["floor"]["leak"] == pytest.approx(0.5) and table["floor"]["recall"] >= 0.75
    # P(true) alone: tau 0.7 keeps q0 .9, q2 .7, q3 NaN (recall 3/4) and only q6 (.8) among refusals
    assert table["P(true)"]["leak"] == pytest.approx(0.25) and table["P(true)"]["recall"] == pytest.approx(
        0.75
    )
    assert table["floor + P(true)"]["leak"] <= min(table["floor"]["leak"], table["P(true)"]["leak"])
    assert cg.compositions(POOLS, P_TRUE, min_recall=1.01)["floor"] is None
