"""Floor presets: each rule's floor on pools whose answer is known by hand, and its bootstrap interval."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nomad_lab.gate.apply import spec_curve
from nomad_lab.gate.floor_presets import leak_bound_floor, preset_floors, recall_budget_floor
from nomad_lab.gate.pools import pools_from_records
from nomad_lab.studies.gating.presets import RunPools, presets_json, presets_markdown


def test_recall_budget_stops_before_the_first_floor_that_costs_too_much() -> None:
    floors = np.array([0.0, 0.1, 0.2, 0.3])
    recall = np.array([1.0, 0.995, 0.97, 0.99])  # a dip at 0.2, then a recovery that must not count
    assert recall_budget_floor(floors, recall, 0.01) == 0.1
    assert recall_budget_floor(floors, recall, 0.05) == 0.3
    assert recall_budget_floor(floors, np.array([1.0, 0.5, 0.5, 0.5]), 0.01) == 0.0


def test_leak_bound_needs_enough_refusals_to_show_it() -> None:
    floors = np.array([0.0, 0.5, 0.6])
    # 0 of 40 leaked: upper bound 1 - 0.05**(1/40) = 0.072 <= 0.10; 0 of 20: 0.139 > 0.10
    assert leak_bound_floor(floors, np.array([40, 1, 0]), 40, 0.10) == 0.6
    assert leak_bound_floor(floors, np.array([20, 0, 0]), 20, 0.10) is None


def pools(answerable_tops: list[float], refusal_tops: list[float]):
    records = [
        {"id": f"a{i}", "expectRefusal": False, "relevantDocIds": ["r"],
         "candidates": [{"docId": "r", "score": s, "semanticScore": s}]}
        for i, s in enumerate(answerable_tops)
    ] + [
        {"id": f"q{i}", "expectRefusal": True, "relevantDocIds": [],
         "candidates": [{"docId": "x", "score": s, "semanticScore": s}]}
        for i, s in enumerate(refusal_tops)
    ]  # fmt: skip
    return pools_from_records(records, fingerprint="0123456789abcdef")


def test_presets_on_hand_computed_pools() -> None:
    """40 answerable questions whose one relevant hit scores 0.605..0.995 (recall at floor f is the share
    scoring >= f), 50 refusals topping at 0.455 or 0.555 (10 of them)."""
    answerable = [round(0.605 + 0.01 * i, 3) for i in range(40)]
    refusal = [0.455] * 40 + [0.555] * 10
    curve = spec_curve(pools(answerable, refusal), "floor")
    found = {p.rule.name: p for p in preset_floors(curve, resamples=300)}
    assert found["off"].floor == 0.0 and found["off"].leak == 1.0
    # losing one of 40 answers costs 0.025: lenient (0.01) keeps all 40 -> highest floor 0.60;
    # balanced (0.05) may lose two -> 0.62 (0.605 and 0.615 gone, 0.625 kept)
    assert found["lenient"].floor == 0.60 and found["lenient"].recall == 1.0
    assert found["balanced"].floor == 0.62 and found["balanced"].recall == pytest.approx(38 / 40)
    # 0 of 50 leaked first at 0.56: upper bound 0.058 <= 0.10; at 0.46..0.55 10/50 leak
    assert found["strict"].floor == 0.56 and found["strict"].leak == 0.0
    strict = found["strict"]
    assert strict.low is not None and strict.low <= 0.56 <= strict.high
    assert found["lenient"].low <= 0.60 <= found["lenient"].high


def test_the_carried_json_names_its_embedder(tmp_path: Path) -> None:
    run = RunPools("run-1", pools([0.7, 0.8], [0.3] * 20), {"spec": "wordllama:", "dimension": 256})
    curve = spec_curve(run.pools, "floor")
    data = presets_json(run, preset_floors(curve, resamples=100))
    assert data["embedder"]["spec"] == "wordllama:" and list(data["presets"]) == [
        "off",
        "lenient",
        "balanced",
        "strict",
    ]
    assert data["presets"]["strict"]["minFinalScore"] is None  # 20 refusals cannot show <= 0.10
    json.dumps(data)
    assert "| strict | n/a [n/a, n/a] |" in presets_markdown(data)
