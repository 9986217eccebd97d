"""Embedders side by side on stored runs whose floors are known by construction."""

from __future__ import annotations

from pathlib import Path

import pytest

from nomad_lab.publish.results import write
from nomad_lab.store import Store
from nomad_lab.studies.gating.embedders import STUDY, latest_run_per_embedder
from nomad_lab.studies.shape import execute
from tests.support.dumps import PARAMS


def run_dump(shift: float, spec: str) -> dict:
    """40 answerable questions (relevant top hit 0.805..0.995) and 60 refusals (top 0.505), all shifted."""
    pools = [
        {"id": f"a{i}", "tags": ["single-hop"], "expectRefusal": False, "relevantDocIds": ["r"],
         "candidates": [{"docId": "r", "score": round(0.805 + 0.005 * i + shift, 4), "semanticScore": 0.5}]}
        for i in range(40)
    ] + [
        {"id": f"q{i}", "tags": ["off-topic"], "expectRefusal": True, "relevantDocIds": [],
         "candidates": [{"docId": "x", "score": round(0.505 + shift, 4), "semanticScore": 0.4}]}
        for i in range(60)
    ]  # fmt: skip
    return {
        "fingerprint": "0123456789abcdef",
        "params": {**PARAMS, "embedder": {"spec": spec}},
        "pools": pools,
    }


def test_a_floor_transfers_only_between_embedders_on_the_same_scale(tmp_path: Path) -> None:
    store_path = tmp_path / "s.duckdb"
    with Store(store_path) as store:
        for shift, spec in ((0.0, "st:"), (0.02, "st:other"), (-0.3, "wordllama:")):
            store.import_dump(run_dump(shift, spec))
    runs = latest_run_per_embedder(store_path)
    assert len(runs) == 3
    result, _ = execute(
        STUDY, {"run": ["latest"], "store": store_path, "out": tmp_path / "out"}, publish=write
    )
    data = result.value["data"]
    assert [row["runId"] for row in data["embedders"]] == runs
    floors = {row["embedder"]["spec"]: row["calibratedFloor"] for row in data["embedders"]}
    # the lowest floor leaving 0 of 60 refusals (95% upper bound 0.049 <= 0.10) is just above the refusal top
    assert floors == pytest.approx({"st:": 0.51, "st:other": 0.53, "wordllama:": 0.21})
    margins = {row["embedder"]["spec"]: row["margin"] for row in data["embedders"]}
    assert margins["st:"] == pytest.approx(0.805 - 0.51)
    verdicts = {(t["from"], t["to"]): t["transfers"] for t in data["transfer"]}
    assert verdicts[("st:", "st:other")] is False  # other's refusals (0.525) pass a 0.51 floor: leak 60/60
    assert verdicts[("st:other", "st:")] is True  # 0.53 still below every answer (0.805+): no recall lost
    assert verdicts[("st:", "wordllama:")] is False  # every wordllama answer (<= 0.695) falls below 0.51
    assert verdicts[("wordllama:", "st:")] is False  # 0.21 lets every refusal through
    assert (tmp_path / "out" / "embedders.png").exists()
    assert (
        "| st:other | st: | 0.53 | 0.000 (0.049) | 1.000 | 1.000 | yes |"
        in (tmp_path / "out" / "embedders.md").read_text()
    )
