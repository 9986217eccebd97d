"""``gate export --to ts`` under the project's own Node, and the Python runtime, against ``gate apply``:
on every stored question of both corpora, the same keep decision and scores within 1e-9, for a gate on
pool statistics, one adding coverage (its vocabulary exported) and one adding the query embedding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.gate.runtime import load
from tests.gate_export.conftest import CORPORA, FEATURE_SETS, Fitted, applied, run_node

RUNNER = Path(__file__).with_name("run_gate.mjs")


def export(fitted: Fitted, kinds: str, to: str, out: Path) -> Path:
    argv = ["gate", "export", str(fitted.gates[kinds]), "--to", to, "--store", str(fitted.store)]
    assert main([*argv, "--out", str(out)]) == 0
    return out


def node_scores(module: Path, questions: list[dict], tmp_path: Path) -> dict:
    return run_node(RUNNER, questions, tmp_path, str(module))


@pytest.mark.slow
@pytest.mark.parametrize("corpus", list(CORPORA))
@pytest.mark.parametrize("kinds", FEATURE_SETS)
def test_the_exported_module_and_the_runtime_decide_as_gate_apply(
    fitted: dict[str, Fitted], corpus: str, kinds: str, tmp_path: Path
) -> None:
    run = fitted[corpus]
    python = applied(run, kinds)
    threshold, expected = python["threshold"], python["scores"]
    module = export(run, kinds, "ts", tmp_path / "gate.ts")
    ts = node_scores(module, run.questions, tmp_path)
    runtime = load(export(run, kinds, "json", tmp_path / "gate.json"))
    assert len(ts) == len(expected) == len(run.questions) > 100
    kept = 0
    for q in run.questions:
        score = expected[q["id"]]
        own = runtime.score(q["question"], q["passages"], q["queryVector"])
        assert abs(ts[q["id"]]["score"] - score) <= 1e-9, (q["id"], ts[q["id"]], score)
        assert abs(own - score) <= 1e-9, (q["id"], own, score)
        assert (
            ts[q["id"]]["keep"]
            == runtime.keep(q["question"], q["passages"], q["queryVector"])
            == (score >= threshold)
        )
        kept += score >= threshold
    assert 0 < kept < len(run.questions)  # the gate decides something both ways


def test_a_gate_reading_a_model_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gate = json.loads((Path(__file__).parents[2] / "results" / "gates" / "learned_gate.json").read_text())
    assert "ce" in gate["kinds"]  # the published gate reads the cross-encoder
    path = tmp_path / "ce.json"
    path.write_text(json.dumps(gate))
    assert main(["gate", "export", str(path), "--to", "ts", "--store", str(tmp_path / "s.duckdb")]) == 1
    err = capsys.readouterr().err
    assert "cannot export a gate that reads ce (a cross-encoder)" in err and err.count("\n") == 1


def test_the_floor_exports_as_a_settings_snippet(fitted: dict[str, Fitted], tmp_path: Path) -> None:
    run = fitted["default"]
    out = tmp_path / "floor.ts"
    assert (
        main(["gate", "export", "floor@0.55", "--run", run.run, "--store", str(run.store), "--out", str(out)])
        == 0
    )
    text = out.read_text()
    assert "export const RAG_MIN_FINAL_SCORE = 0.55;" in text and "all-MiniLM-L6-v2" in text
