"""The explore snapshot with a tau: sets whose stored P(true) is below it are dropped, unknown ones kept."""

from __future__ import annotations

import numpy as np
import pytest

from nomad_lab.gate.pools import pools_from_records
from nomad_lab.studies.gating.explore import ExploreData, snapshot


def record(i: int, refusal: bool) -> dict:
    return {
        "id": f"q{i}",
        "tags": [],
        "expectRefusal": refusal,
        "relevantDocIds": [] if refusal else [f"d{i}"],
        "candidates": [{"docId": f"d{i}", "score": 0.7, "semanticScore": 0.7}],
    }


def test_tau_drops_low_confidence_sets_and_keeps_unknown_ones() -> None:
    pools = pools_from_records([record(0, True), record(1, True), record(2, False), record(3, False)])
    data = ExploreData(
        pools, ["a", "b", "c", "d"], ["", "", "", ""], p_true=np.array([0.2, np.nan, 0.9, 0.4])
    )
    assert snapshot(data, 0.0, False).leak == 1.0
    shot = snapshot(data, 0.0, False, tau=0.5)
    assert shot.leak == pytest.approx(0.5) and [c.golden_id for c in shot.leaked] == ["q1"]
    assert shot.recall == pytest.approx(0.5)
    assert snapshot(data, 0.0, False, tau=0.0).recall == 1.0  # tau 0 is off
