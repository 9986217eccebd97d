"""The floor study end to end: CLI and the papermill-executed notebook over a stored dump."""

from __future__ import annotations

import json
from pathlib import Path

import papermill
import pytest

from nomad_lab.cli import main
from nomad_lab.runners.notebooks import as_ipynb
from tests.support.dumps import dump_of, random_records
from tests.support.paths import ROOT


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(dump_of(random_records(11, 150))))
    return path


def test_sweep_command_writes_table_curves_and_plots(dump: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["sweep", "--dump", str(dump), "--out", str(out), "--alpha", "0.2"]) == 0
    printed = capsys.readouterr().out
    assert "| 0.62 |" in printed and ("floor" in printed)
    summary = json.loads((out / "floor_sweep.json").read_text())
    assert summary["pools"] == 150 and len(summary["curves"]["floor"]) == 101
    assert set(summary["curves"]) == {"floor", "cosine", "contrast"}  # named by their gate specs
    assert (out / "floor_sweep.png").stat().st_size > 10_000 and (out / "leak_vs_recall.png").exists()


@pytest.mark.slow
def test_floor_sweep_notebook_runs_under_papermill(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "nb"
    executed = tmp_path / "floor_sweep.out.ipynb"
    papermill.execute_notebook(
        str(as_ipynb(ROOT / "notebooks" / "floor_sweep.py", tmp_path)),
        str(executed),
        parameters={"dump": str(dump), "out_dir": str(out), "alpha": 0.2, "refusal_tag": "off-topic"},
        kernel_name="python3",
        cwd=str(ROOT),
        progress_bar=False,
    )
    assert json.loads((out / "floor_sweep.json").read_text())["pools"] == 150
    cells = json.loads(executed.read_text())["cells"]
    assert any("injected-parameters" in c["metadata"].get("tags", []) for c in cells)


def test_a_gate_spec_is_parsed_once_at_the_edge(
    dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--gate`` is parsed by its parameter type (GATE_SPEC) where the parameters are resolved; the study
    and the gating code below it take that GateSpec and never parse it again (it was up to 5 times)."""
    import sys

    from nomad_lab.gate import spec
    from nomad_lab.runners.studies import run_study

    parsed: list[str] = []
    real = spec.parse_gate_spec

    def counting(text: str):
        parsed.append(str(text))
        return real(text)

    for module in list(sys.modules.values()):  # every module holding the parser: the edge and below
        if getattr(module, "parse_gate_spec", None) is real:
            monkeypatch.setattr(module, "parse_gate_spec", counting)
    gates = ["floor@0.4+contrast", "cosine@.5"]
    result, _ = run_study("floor-sweep", dump=dump, gate=gates, out=tmp_path / "out")
    study = result.value  # the study's value holds the measured sweep
    asked = [s for s in parsed if s not in ("floor", "cosine", "contrast")]
    assert asked == ["floor@0.4+contrast", "cosine@.5"]  # once each
    assert [c.gate for c in study.extra] == ["floor@0.4+contrast", "cosine@0.5"]
