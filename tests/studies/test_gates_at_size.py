"""The gates-at-size study on a small real library: every size gets a leaderboard, the gate carried from
the smallest size is scored on the same held-out questions at each size, and the page reads it all.

WordLlama embeds (fast, real); the "library" is the pydocs corpus's documents, added to the default
corpus 8 and then 24 at a time; two folds and one repeat keep it to seconds. No cross-encoder here (its
rows are the leaderboard's own, tested there).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from nomad_lab.core.workspace import DATASETS_DIR
from nomad_lab.data.refusal_kinds import OFF_TOPIC
from nomad_lab.publish.results import write
from nomad_lab.retrieval.index_spec import HNSW_DEFAULTS
from nomad_lab.studies.gating import gates_at_size
from nomad_lab.studies.gating.size_report import deploy_choice, families, markdown
from nomad_lab.studies.shape import resolve_params

pytest.importorskip("wordllama")


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("size")
    library = root / "library"
    shutil.copytree(DATASETS_DIR / "corpora" / "pydocs" / "corpus", library)
    params = resolve_params(
        gates_at_size.PARAMS,
        {
            "library": library,
            "docs": [8, 24],
            "embedder": "wordllama:64",
            "no_ce": True,
            "compare_index": "hnsw",
            "folds": 2,
            "repeats": 1,
            "store": root / "store.duckdb",
            "bank_skip": ["coding"],
            "no_progress": True,
        },
        "study gates-at-size",
    )
    old = gates_at_size.WORK_DIR
    gates_at_size.WORK_DIR = root / "work"
    try:
        return gates_at_size.compute(params)
    finally:
        gates_at_size.WORK_DIR = old


def test_every_size_has_a_leaderboard_and_grows(result: dict) -> None:
    sizes = result["sizes"]
    assert [s["documents"] > 0 for s in sizes] == [True] * 3
    assert sizes[0]["megabytes"] < sizes[1]["megabytes"] < sizes[2]["megabytes"]
    for size in sizes:
        found = families(size)
        assert "floor" in found and "best refit here" in found
        assert found["floor"]["byKind"][OFF_TOPIC]["n"] == size["refusalsByKind"][OFF_TOPIC] > 0
        assert (
            len(size["passedAtRecallTarget"]["floor (swept)"]) == size["questions"]
        )  # decisions per question


def test_the_carried_gate_is_the_same_gate_at_every_size(result: dict) -> None:
    small, *larger = result["sizes"]
    assert "transfer" not in small
    carried = [t for s in larger for t in s["transfer"]]
    assert {t["recipe"] for t in carried} == {
        "learned: pool + coverage + bank"
    }  # no ce: its recipe is left out
    # the fold gates and their held-out questions at the small size do not depend on the larger size
    assert larger[0]["transfer"][0]["atSmall"] == larger[1]["transfer"][0]["atSmall"]
    change = carried[0]["change"][OFF_TOPIC]
    at_small = carried[0]["atSmall"][OFF_TOPIC]["passAtRecallTarget"][0]
    at_large = carried[0]["byKind"][OFF_TOPIC]["passAtRecallTarget"][0]
    assert change["difference"] == pytest.approx(at_large - at_small, abs=1e-9)
    assert change["low"] <= change["difference"] <= change["high"] and change["n"] > 0


def test_the_page_reads_every_size_and_names_what_to_deploy(result: dict, tmp_path: Path) -> None:
    text = markdown(result)
    assert not re.search(r"\bnan\b", text, re.IGNORECASE)
    for size in result["sizes"]:
        assert size["label"] in text
    assert "What to deploy at your size" in text
    assert [s["deploy"] for s in result["sizes"]] == [deploy_choice(s) for s in result["sizes"]]
    written = write(gates_at_size.STUDY.result(result), tmp_path)
    assert written["leak_vs_size.png"].exists()
    assert (
        gates_at_size.STUDY.pages(json.loads(written["gates_at_size.json"].read_text()))[0].markdown() == text
    )


def test_hnsw_is_compared_with_exact_at_the_largest_size(result: dict) -> None:
    compared = result["indexComparison"]
    assert compared["index"] == "hnsw" and compared["against"] == "exact"
    assert compared["questions"] == result["sizes"][-1]["questions"]
    recall = compared["recallAt5NoFloor"]
    assert recall["difference"] == pytest.approx(recall["b"] - recall["a"], abs=1e-9)
    assert 0 <= compared["sameTop5"] <= 1 and "0.62" in compared["offTopicLeakAtFloor"]
    beam = HNSW_DEFAULTS["ef_search"]
    assert compared["indexParameters"]["ef_search"] == beam  # what "hnsw" meant when it ran
    assert f"Index `hnsw` (m 32, ef_construction 200, ef_search {beam}) against `exact`" in markdown(result)


def _row(gate: str, family: str, leak: float, reached: float) -> dict:
    return {
        "gate": gate,
        "family": family,
        "byKind": {OFF_TOPIC: {"passAtRecallTarget": [leak, leak / 2, leak * 2], "n": 140}},
        "recallAtRecallTarget": [reached, reached - 0.02, reached + 0.02],
    }


def test_the_gate_to_deploy_is_the_least_leak_among_rows_reaching_the_recall_target() -> None:
    size = {
        "rows": [
            _row("floor", "floor", 0.20, 0.91),
            _row("ce:msmarco", "ce", 0.01, 0.85),  # leaks least but misses the recall target
            _row("learned: pool + ce", "learned", 0.05, 0.92),
            _row("learned: pool", "learned", 0.07, 0.93),
        ],
        "best": "learned: pool + ce",
        "bestWithoutModelCall": "learned: pool",
        "gateName": "learned: pool + ce",
        "gateThreshold": 0.4,
        "transfer": [{**_row("transfer: x", "learned", 0.0, 0.99), "recipe": "x"}],  # carried: never picked
    }
    pick = deploy_choice(size)
    assert pick is not None
    assert (pick["family"], pick["gate"], pick["threshold"]) == ("best refit here", "learned: pool + ce", 0.4)
    assert pick["offTopicLeak"][0] == 0.05 and pick["n"] == 140
    size["rows"] = size["rows"][1:2]  # only the row that misses the target is left
    size["best"] = size["bestWithoutModelCall"] = "ce:msmarco"
    assert deploy_choice(size) is None
