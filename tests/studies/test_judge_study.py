"""The judge as a gate over a stored run: verdicts once from the store, then paired statistics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nomad_lab.gate.pools import pools_from_records
from nomad_lab.studies.gating.judges import JudgedRun, compare_with_floor, judge_run, markdown
from tests.support.retrieval import CountingJudgeBackend, fixture_run


def test_compare_with_floor_on_synthetic_verdicts() -> None:
    records = [
        {
            "id": f"r{i}",
            "tags": [],
            "expectRefusal": True,
            "relevantDocIds": [],
            "candidates": [{"docId": "x", "score": 0.7, "semanticScore": 0.6}],
        }
        for i in range(20)
    ] + [
        {
            "id": f"a{i}",
            "tags": [],
            "expectRefusal": False,
            "relevantDocIds": ["x"],
            "candidates": [{"docId": "x", "score": 0.8, "semanticScore": 0.7}],
        }
        for i in range(20)
    ]
    verdicts = np.array([0.0] * 15 + [1.0] * 5 + [1.0] * 18 + [0.0] * 1 + [np.nan])
    judged = JudgedRun(pools_from_records(records), verdicts, np.full(40, 100.0), 0.5, "m", "", 0, 40)
    row = compare_with_floor(judged)
    assert row.leak_floor[0] == 1.0 and row.leak_judge[0] == pytest.approx(0.25)
    assert row.recall_floor[0] == 1.0 and row.recall_judge[0] == pytest.approx(0.95)  # NaN = unjudged, kept
    assert row.leak_test.p_value < 1e-3 and row.recall_test.statistic == pytest.approx(-0.05)
    assert "| m | 0.50 |" in markdown([row])


@pytest.mark.slow
def test_judge_run_reads_and_writes_the_verdict_cache(tmp_path: Path, embedder) -> None:
    from nomad_lab.store import Store

    store_path = tmp_path / "ws.duckdb"
    run_id = fixture_run(store_path, embedder)
    backend = CountingJudgeBackend()
    with Store(store_path) as store:
        first = judge_run(store, run_id, "test:counting-judge", floor=0.0, backend=backend, progress=False)
        calls = backend.calls
        second = judge_run(store, run_id, "test:counting-judge", floor=0.0, backend=backend, progress=False)
    assert calls == first.calls > 0 and backend.calls == calls  # nothing computed twice
    assert np.array_equal(first.verdicts, second.verdicts, equal_nan=True)
    assert (first.verdicts == 0).any()  # the counting judge rejects the haiku
    row = compare_with_floor(first)
    assert row.leak_judge[0] < row.leak_floor[0]
