"""The gating service: every registered family evaluates through every door, and a new family or input
kind is one module (dropped into a temporary folder here, as the study registry test does)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import papermill
import pytest

import nomad_lab.eval.gating.inputs as input_package
import nomad_lab.gate.families as family_package
from nomad_lab.cli import main
from nomad_lab.core.first_run import FIRST_RUN_COMMAND
from nomad_lab.eval import gating
from nomad_lab.gate.apply import spec_needs
from nomad_lab.gate.families import Need, families
from nomad_lab.gate.spec import parse_gate_spec
from nomad_lab.runners.notebooks import as_ipynb
from nomad_lab.store import Store
from nomad_lab.studies.gating.judges import judge_run
from tests.support.paths import ROOT
from tests.support.retrieval import CountingJudgeBackend, fixture_run


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, embedder) -> dict:
    """One stored run with its dump, cached judge verdicts and a fitted gate file."""
    tmp = tmp_path_factory.mktemp("gating")
    store, dump = tmp / "store.duckdb", tmp / "dump.json"
    run_id = fixture_run(store, embedder, dump_path=dump)
    with Store(store) as opened:
        judge_run(opened, run_id, "counting", floor=0.0, backend=CountingJudgeBackend(), progress=False)
    gate = tmp / "gate.json"
    fit = ["gate", "fit", "--run", run_id, "--store", str(store), "--out", str(gate), "--no-bank"]
    assert main([*fit, "--folds", "2", "--repeats", "1"]) == 0
    answer = answer_gate(store, run_id, tmp / "answer.json")
    sufficiency = answer_gate(store, run_id, tmp / "sufficiency.json", sufficiency=True)
    return {
        "store": store,
        "dump": dump,
        "run": run_id,
        "gate": gate,
        "answer": answer,
        "sufficiency": sufficiency,
        "tmp": tmp,
    }


def answer_gate(store: Path, run_id: str, path: Path, sufficiency: bool = False) -> Path:
    """An answerability (or sufficiency) gate file locked to the run: the real ONNX body (the one the
    doors' gathers share) with its zero-shot head (a sufficiency gate with the answer-type shift at
    weight 1)."""
    from nomad_lab.eval.gating.run_data import load_run
    from nomad_lab.gate.answer_file import SufficiencyGate
    from nomad_lab.retrieval.answer_cache import save_gate_files
    from nomad_lab.retrieval.answer_model import make_head, shared_body

    data = load_run(store, run_id, embed=False)
    body = shared_body()
    training = {"run": run_id, "fingerprint": data.pools.fingerprint}
    head = make_head(body.weights, body.heads)
    if sufficiency:
        scoring = {"units": 4, "unitWords": 80, "typeWeight": 1.0}
        return save_gate_files(
            path, head, body, 0.0, data.embedder, training, kind=SufficiencyGate, scoring=scoring
        )
    return save_gate_files(path, head, body, 0.0, data.embedder, training)


def specs(workspace: dict) -> dict[str, str]:
    """One spec per registered family (a family added without a spec here fails the door test)."""
    return {
        "floor": "floor",
        "cosine": "cosine@0.3",
        "contrast": "contrast",
        "judge": "judge:counting@0.5",
        "learned": f"learned:{workspace['gate']}",
        "rerank": "rerank:nanoranker",
        "answer": f"answer:{workspace['answer']}",
        "sufficiency": f"sufficiency:{workspace['sufficiency']}",
        "ce": "ce:ms-marco-minilm-l12",
        "score": "score:semanticScore",
    }


def test_every_family_has_a_spec_in_the_door_test(workspace: dict) -> None:
    assert set(families()) == set(specs(workspace))


def test_python_door_evaluates_every_family_and_composition(workspace: dict) -> None:
    store, run = workspace["store"], workspace["run"]
    for family, spec in specs(workspace).items():
        curve = gating.curve(store, run, spec)
        assert curve.gate == str(parse_gate_spec(spec)), family
        assert np.all((curve.leak >= 0) & (curve.leak <= 1)), family
        points, mask = gating.mask(store, run, spec)
        assert mask.shape[0] == len(points) and mask.shape[1] == 9
    both = gating.curve(store, run, "floor@0.3+judge:counting")  # needs gathered for one part only
    verdict_only = gating.curve(store, run, "judge:counting")
    assert np.all(both.leak <= verdict_only.leak + 1e-12)


def test_cli_doors_take_every_family(workspace: dict, tmp_path: Path, capsys) -> None:
    store, run, dump = str(workspace["store"]), workspace["run"], str(workspace["dump"])
    all_specs = list(specs(workspace).values())
    gate_args = [a for s in all_specs for a in ("--gate", s)]
    for door in (["study", "floor-sweep"], ["sweep"]):
        out = tmp_path / door[-1]
        argv = [*door, "--dump", dump, "--refusal-tag", "", "--store", store, "--run", run, "--out", str(out)]
        assert main([*argv, *gate_args]) == 0, door
        curves = json.loads((out / "floor_sweep.json").read_text())["curves"]
        assert {str(parse_gate_spec(s)) for s in all_specs} <= set(curves), door
    out = tmp_path / "gates"
    argv = ["study", "gates", "--run", run, "--store", store, "--no-bank", "--folds", "2", "--repeats", "1"]
    assert main([*argv, "--judge", "counting", *gate_args[4:], "--out", str(out)]) == 0
    rows = {r["gate"] for r in json.loads((out / "gates.json").read_text())["rows"]}
    for spec in all_specs[2:]:
        assert any(name.startswith(str(parse_gate_spec(spec)).split("@")[0]) for name in rows), spec
    capsys.readouterr()


def test_a_spec_needing_a_stored_run_without_one_is_one_line(workspace: dict, tmp_path: Path, capsys) -> None:
    argv = [
        "sweep",
        "--dump",
        str(workspace["dump"]),
        "--out",
        str(tmp_path / "x"),
        "--gate",
        "judge:counting",
    ]
    missing, empty = tmp_path / "missing.duckdb", tmp_path / "empty.duckdb"
    Store(empty).close()
    for store, said in ((missing, "no store yet, so no run latest"), (empty, "no retrieval run stored yet")):
        assert main([*argv, "--store", str(store)]) == 1  # --run latest, the default, names none here
        error = capsys.readouterr().err.strip()
        assert said in error and f"`{FIRST_RUN_COMMAND}`" in error and "\n" not in error
    assert not missing.exists()  # the store is only read


@pytest.mark.slow
def test_notebook_door_takes_a_spec_that_needs_the_store(workspace: dict, tmp_path: Path) -> None:
    out = tmp_path / "nb"
    papermill.execute_notebook(
        str(as_ipynb(ROOT / "notebooks" / "floor_sweep.py", tmp_path)),
        str(tmp_path / "executed.ipynb"),
        parameters={
            "dump": str(workspace["dump"]),
            "out_dir": str(out),
            "refusal_tag": "",
            "gate": ["judge:counting@0.5", f"learned:{workspace['gate']}"],
            "run": workspace["run"],
            "store": str(workspace["store"]),
        },
        kernel_name="python3",
        cwd=str(ROOT),
        progress_bar=False,
    )
    curves = json.loads((out / "floor_sweep.json").read_text())["curves"]
    assert "judge:counting@0.5" in curves and f"learned:{workspace['gate']}" in curves


PLANTED_FAMILY = '''
"""``planted@D``: keep a pool when its top-two gap (a pool feature) is at least D."""
import numpy as np
from nomad_lab.gate.families import OMIT_SWEEP, Family, Need, all_or_nothing

def score(pools, atom, inputs):
    return inputs[Need("planted_gap")]

def keep(pools, atom, points, inputs):
    return all_or_nothing(score(pools, atom, inputs), pools, points)

FAMILY = Family(
    name="planted", form="planted[@D]", target=False, value="gap", low=0.0, high=None,
    omitted=OMIT_SWEEP, keep=keep, score=score, needs=lambda atom: (Need("planted_gap"),),
)
'''

PLANTED_INPUT = '''
"""``planted_gap``: the top-two final-score gap from the run's pool statistics."""
KIND = "planted_gap"

def gather(ctx, key):
    block = ctx.data.features.blocks["pool"]
    return block.matrix[:, block.names.index("gap_1_2")]
'''


def test_a_new_family_and_its_input_kind_are_one_module_each(
    workspace: dict, tmp_path: Path, monkeypatch, capsys
) -> None:
    (tmp_path / "families").mkdir()
    (tmp_path / "families" / "planted.py").write_text(PLANTED_FAMILY)
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "planted_gap.py").write_text(PLANTED_INPUT)
    monkeypatch.setattr(family_package, "__path__", [*family_package.__path__, str(tmp_path / "families")])
    monkeypatch.setattr(input_package, "__path__", [*input_package.__path__, str(tmp_path / "inputs")])
    assert "planted" in families() and spec_needs("planted@0.1") == (Need("planted_gap"),)
    curve = gating.curve(workspace["store"], workspace["run"], "planted")
    assert len(curve.points) > 1
    out = tmp_path / "out"
    argv = ["sweep", "--dump", str(workspace["dump"]), "--store", str(workspace["store"]), "--out", str(out)]
    assert main([*argv, "--gate", "planted@0.01+floor@0.2"]) == 0
    assert "planted@0.01+floor@0.2" in json.loads((out / "floor_sweep.json").read_text())["curves"]
    assert main(["sweep", "--dump", str(workspace["dump"]), "--out", str(out), "--gate", "plantd@1"]) == 1
    assert "planted[@D]" in capsys.readouterr().err  # the accepted forms come from the registry
