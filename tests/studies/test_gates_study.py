"""``study gates``, ``gate fit`` and ``gate apply`` end to end on the fixture corpus with real MiniLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nomad_lab.cli import main
from tests.support.paths import CORPUS, FIXTURES, GOLDENS
from tests.support.retrieval import CountingJudgeBackend, fixture_run

BANK = FIXTURES / "gates" / "bank.jsonl"


@pytest.fixture
def run(tmp_path: Path, embedder) -> tuple[Path, str]:
    store = tmp_path / "store.duckdb"
    return store, fixture_run(store, embedder)


def test_study_gates_writes_the_leaderboard(run: tuple[Path, str], tmp_path: Path, capsys, embedder) -> None:
    from nomad_lab.store import Store
    from nomad_lab.studies.gating.judges import judge_run

    store, run_id = run
    core = fixture_run(store, embedder, suite="core")  # the transfer row's training run
    backend = CountingJudgeBackend()
    with Store(store) as opened:  # verdicts cached beforehand: the study itself makes no judge call
        judge_run(opened, run_id, "counting", floor=0.0, backend=backend, progress=False)
    calls = backend.calls
    out = tmp_path / "gates"
    argv = ["study", "gates", "--run", run_id, "--store", str(store), "--bank", str(BANK), "--out", str(out)]
    argv += [
        "--judge",
        "counting",
        "embedded:gemma3-270m",
        "--transfer-run",
        core,
        "--reranker",
        "nanoranker",
    ]
    assert main([*argv, "--folds", "3", "--repeats", "2"]) == 0
    printed = capsys.readouterr().out
    assert calls > 0 and backend.calls == calls
    for name in (
        "floor (swept)",
        "contrast (swept)",
        "judge counting: verdict",
        "learned: query only",
        "learned: pool + query + bank",
        f"transfer: gate from run {core}",
        "reranker nanoranker (best of top 5, swept)",
    ):
        assert f"| {name} |" in printed
    assert "| judge embedded:gemma3-270m | - |" in printed and "lack a cached verdict" in printed
    assert "scored on the 3 questions it never saw" in printed
    summary = json.loads((out / "gates.json").read_text())
    assert summary["run"] == run_id and summary["bank"]["questions"] == 6
    learned = next(r for r in summary["rows"] if r["gate"] == "learned: pool + query")
    assert learned["outOfFold"] and learned["repeats"] == 2 and learned["calls"] == 0
    assert (out / "gates.png").stat().st_size > 5_000
    gate = json.loads((out / "learned_gate.json").read_text())
    assert gate["embedder"]["model"] and gate["training"]["run"] == run_id


def test_gate_fit_then_apply_and_refuse_another_embedder(
    run: tuple[Path, str], tmp_path: Path, capsys
) -> None:
    store, run_id = run
    path = tmp_path / "g.json"
    fit = ["gate", "fit", "--run", run_id, "--out", str(path), "--store", str(store), "--no-bank"]
    assert main([*fit, "--folds", "3", "--repeats", "1"]) == 0
    assert "out of fold" in capsys.readouterr().out
    assert main(["gate", "apply", str(path), "--run", run_id, "--store", str(store)]) == 0
    assert "in sample" in capsys.readouterr().out
    data = json.loads(path.read_text())
    data["embedder"]["model"] = "nomic-embed-text"
    path.write_text(json.dumps(data))
    assert main(["gate", "apply", str(path), "--run", run_id, "--store", str(store)]) == 1
    error = capsys.readouterr().err.strip()
    assert "fitted on nomic-embed-text" in error and "\n" not in error


def test_study_gates_retrieves_another_corpus_when_no_run_is_given(tmp_path: Path, embedder) -> None:
    store, out = tmp_path / "store.duckdb", tmp_path / "gates"
    argv = ["study", "gates", "--corpus", str(CORPUS), "--goldens", str(GOLDENS), "--store", str(store)]
    assert main([*argv, "--no-bank", "--folds", "3", "--repeats", "1", "--out", str(out)]) == 0
    summary = json.loads((out / "gates.json").read_text())
    assert summary["questions"] == 9 and summary["bank"] is None
    assert not any(r["gate"].endswith("+ bank") for r in summary["rows"])
