"""Does approximate search change the figures? Two indexes' runs of the same questions, paired.

The reference searches Qdrant's HNSW graph; the workbench's figures were measured with exact search. On
the largest library (where a graph misses most), the same suites are retrieved through both indexes and
compared question by question: recall@5 with no floor (paired bootstrap over answerable questions), the
off-topic leak at the reference floor and at the floor calibrated on the exact run (paired over the same
refusals), and the share of questions whose top 5 is identical.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE
from nomad_lab.data.refusal_kinds import OFF_TOPIC
from nomad_lab.eval.gating import RunData
from nomad_lab.gate.apply import spec_curve
from nomad_lab.gate.masks import evaluate_score_floors
from nomad_lab.gate.operating_curves import restrict_refusals
from nomad_lab.gate.stats import paired_bootstrap
from nomad_lab.studies.gating.size_transfer import aligned

__all__ = ["compare_indexes"]


def _test(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
    test = paired_bootstrap(a, b)
    return {
        "a": float(np.nanmean(a)),
        "b": float(np.nanmean(b)),
        "difference": test.statistic,
        "low": test.low,
        "high": test.high,
        "p": test.p_value,
        "n": test.n,
    }


def compare_indexes(exact: RunData, other: RunData, leak_target: float) -> dict[str, Any]:
    """``other`` (an approximate index's run) against ``exact``, on the questions both retrieved."""
    exact, other = aligned(exact, other)
    off_topic = exact.pools.refusal_kinds == OFF_TOPIC
    calibrated = spec_curve(restrict_refusals(exact.pools, OFF_TOPIC), "floor").calibrated(leak_target).floor
    floors = [0.0, RAG_MIN_FINAL_SCORE] + ([calibrated] if calibrated is not None else [])
    (recall_a, passed_a), (recall_b, passed_b) = (
        evaluate_score_floors(run.pools, floors) for run in (exact, other)
    )
    top = exact.pools.semantic[:, :5], other.pools.semantic[:, :5]
    same_top5 = np.all(np.isclose(top[0], top[1], atol=1e-6, equal_nan=True), axis=1)
    leak = {
        f"{f:g}": _test(passed_a[i][off_topic].astype(float), passed_b[i][off_topic].astype(float))
        for i, f in enumerate(floors)
        if f > 0
    }
    return {
        "questions": exact.pools.size,
        "offTopicRefusals": int(off_topic.sum()),
        "recallAt5NoFloor": _test(recall_a[0], recall_b[0]),
        "offTopicLeakAtFloor": leak,
        "calibratedFloor": calibrated,
        "sameTop5": float(same_top5.mean()),
    }
