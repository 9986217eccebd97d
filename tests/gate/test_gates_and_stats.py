"""Gates over stored pools against a naive per-pool implementation, and the statistics' guarantees."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nomad_lab.data.dump import DumpError
from nomad_lab.gate import masks
from nomad_lab.gate.apply import spec_curve
from nomad_lab.gate.operating_curves import floor_margins, leak_by_tag
from nomad_lab.gate.pools import load_dump, pools_from_records
from nomad_lab.gate.stats import (
    bootstrap_means,
    calibrated_floor,
    clopper_pearson_upper,
    mcnemar_exact,
    paired_bootstrap,
)
from tests.support.dumps import dump_of, random_records


def naive(record: dict, floor: float, k: int = 5) -> tuple[float | None, bool]:
    """The reference pipeline on one pool: floor, then diversity (0.85**c, stable re-sort), then top k."""
    kept = [c for c in record["candidates"] if floor <= 0 or c["score"] >= floor]
    seen: dict[str, int] = {}
    scored = []
    for c in kept:
        key = c["docId"] or "unknown"
        count = seen.get(key, 0)
        seen[key] = count + 1
        scored.append((c["score"] * 0.85**count, c["docId"]))
    top = sorted(scored, key=lambda item: -item[0])[:k]
    relevant = set(record["relevantDocIds"])
    recall = len({d for _, d in top if d in relevant}) / len(relevant) if relevant else None
    return recall, bool(top)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_vectorized_floor_sweep_matches_the_naive_pipeline(seed: int) -> None:
    records = random_records(seed)
    pools = pools_from_records(records)
    floors = masks.FLOOR_GRID
    recall, nonempty = masks.evaluate(pools, masks.score_floor(pools, floors))
    fast_recall, fast_nonempty = masks.evaluate_score_floors(pools, floors)
    assert np.array_equal(fast_nonempty, nonempty)
    assert np.array_equal(np.isnan(fast_recall), np.isnan(recall))
    assert np.allclose(fast_recall[~np.isnan(recall)], recall[~np.isnan(recall)])
    for fi, floor in enumerate(floors):
        for pi, record in enumerate(records):
            want_recall, want_nonempty = naive(record, floor)
            assert nonempty[fi, pi] == want_nonempty
            if want_recall is None:
                assert np.isnan(recall[fi, pi])
            else:
                assert recall[fi, pi] == pytest.approx(want_recall), (floor, record["id"])


def test_judge_contrast_and_cosine_gates() -> None:
    records = [
        {
            "id": "a",
            "expectRefusal": True,
            "relevantDocIds": [],
            "candidates": [
                {"docId": "x", "score": 0.8, "semanticScore": 0.5},
                {"docId": "y", "score": 0.7, "semanticScore": 0.7},
            ],
        },
        {
            "id": "b",
            "expectRefusal": False,
            "relevantDocIds": ["x"],
            "candidates": [
                {"docId": "x", "score": 0.9, "semanticScore": 0.7},
                {"docId": "y", "score": 0.5, "semanticScore": 0.4},
            ],
        },
    ]
    pools = pools_from_records(records)
    _, nonempty = masks.evaluate(pools, masks.judge(pools, [False, None]))
    assert nonempty.tolist() == [[False, True]]
    _, nonempty = masks.evaluate(pools, masks.contrast(pools, [0.05, 0.3]))
    assert nonempty.tolist() == [[True, True], [False, False]]  # gaps: 0.8-0.75 and 0.9-0.7
    recall, nonempty = masks.evaluate(pools, masks.cosine_floor(pools, [0.6]))
    assert nonempty.tolist() == [[True, True]] and recall[0, 1] == 1.0
    both = masks.both(masks.score_floor(pools, [0.0, 0.85]), masks.judge(pools, [True, False]))
    assert masks.evaluate(pools, both)[1].tolist() == [[True, False], [False, False]]
    assert masks.weakest_correct_top_hit(pools) == 0.9
    assert floor_margins(pools, [0.62]).tolist() == pytest.approx([0.28])


def test_sweep_curve_and_tags() -> None:
    pools = pools_from_records(random_records(7, 120))
    curve = spec_curve(pools, "floor")
    assert curve.leak.shape == (101,) and np.all(
        np.diff(curve.leak) <= 1e-12
    )  # leak never rises with the floor
    assert np.all(curve.leak_lo <= curve.leak + 1e-12) and np.all(curve.leak <= curve.leak_hi + 1e-12)
    assert curve.at(0.0)["leak"] == pytest.approx(
        np.mean([bool(p) for p in pools.valid[pools.expect_refusal].any(1)])
    )
    table = leak_by_tag(pools, masks.score_floor(pools, [0.62]))
    assert set(table) == {"off-topic"}
    with pytest.raises(ValueError, match="unknown gate"):
        spec_curve(pools, "nope")


def test_bootstrap_is_seeded_and_covers_the_mean() -> None:
    values = np.array([[1, 0, 1, 1, np.nan, 0, 1, 1]], dtype=float)
    a, b = bootstrap_means(values), bootstrap_means(values)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    mean, lo, hi = a
    assert mean[0] == pytest.approx(5 / 7)
    assert lo[0] <= mean[0] <= hi[0]


def test_clopper_pearson_is_not_zero_at_zero_events() -> None:
    assert clopper_pearson_upper(0, 110) == pytest.approx(1 - 0.05 ** (1 / 110))
    assert clopper_pearson_upper(5, 5) == 1.0
    from scipy import stats

    for events, trials in [(0, 1), (1, 7), (3, 110), (40, 353), (1, 2000)]:  # the beta quantile, to the bit
        assert clopper_pearson_upper(events, trials) == stats.beta.ppf(0.95, events + 1, trials - events)


def test_calibrated_floor_and_its_failure_message() -> None:
    floors = np.array([0.0, 0.5, 0.9])
    leaked = np.array([[True] * 50 + [False] * 50, [True] * 2 + [False] * 98, [False] * 100])
    recall = np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 0.5]])
    found = calibrated_floor(floors, leaked, recall, alpha=0.1)
    assert found.floor == 0.5 and not found.loses_recall
    strict = calibrated_floor(floors, leaked, recall, alpha=0.02)
    assert strict.floor is None and "cannot meet" in strict.message


def test_paired_tests() -> None:
    a = [True] * 20 + [False] * 20
    b = [False] * 20 + [False] * 20
    test = mcnemar_exact(a, b)
    assert test.p_value == pytest.approx(2 * 0.5**20) and test.statistic == pytest.approx(-0.5)
    same = paired_bootstrap([1.0, 0.5, np.nan], [1.0, 0.5, 1.0])
    assert same.statistic == 0 and same.p_value == 1.0 and same.n == 2


def test_dump_errors_name_the_field(tmp_path: Path) -> None:
    path = tmp_path / "dump.json"
    bad = random_records(1, 3)
    bad[1]["candidates"] = [{"docId": "a", "score": "high", "semanticScore": 0.5}]
    path.write_text(json.dumps(dump_of(bad)))
    with pytest.raises(DumpError, match=r"dump.json: pools\[1\]\.candidates\[0\]\.score"):
        load_dump(path)
    unordered = random_records(1, 3)
    unordered[0]["candidates"] = [
        {"docId": "a", "score": 0.5, "semanticScore": 0.5},
        {"docId": "b", "score": 0.9, "semanticScore": 0.5},
    ]
    path.write_text(json.dumps(dump_of(unordered)))
    with pytest.raises(
        DumpError, match=r"pools\[0\]\.candidates\[1\]\.score: candidates must be in reranked"
    ):
        load_dump(path)
    path.write_text("[1, 2]")
    with pytest.raises(DumpError, match="a candidate dump is a JSON object"):
        load_dump(path)
    path.write_text(json.dumps(dump_of(random_records(1, 3))))
    assert load_dump(path).size == 3


def test_a_kind_name_restricts_refusals_by_kind_and_any_other_value_by_tag() -> None:
    from nomad_lab.gate.operating_curves import refusals_named, restrict_refusals
    from nomad_lab.gate.pools import pools_from_records

    def record(i: str, tags: list[str], refusal: bool = True) -> dict:
        return {
            "id": i,
            "tags": tags,
            "expectRefusal": refusal,
            "relevantDocIds": [] if refusal else ["d"],
            "candidates": [],
        }

    pools = pools_from_records(
        [record("a", ["core"], False), record("b", ["off-topic", "near-domain"]), record("c", ["off-topic"])]
    )
    assert list(refusals_named(pools, "off-topic")) == [False, False, True]  # the kind: no sibling topic
    assert list(refusals_named(pools, "near-domain")) == [False, True, False]
    assert list(refusals_named(pools, "core")) == [False, False, False]  # a tag: refusals only
    assert restrict_refusals(pools, "off-topic").ids == ["a", "c"]
