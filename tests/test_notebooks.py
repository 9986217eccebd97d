"""Every notebook is paired with its jupytext script and really executes under papermill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_matches_its_script_and_has_parameters(notebook: Path) -> None:
    jupytext = pytest.importorskip("jupytext")
    script = jupytext.read(notebook.with_suffix(".py"))
    paired = jupytext.read(notebook)
    assert [c.source for c in script.cells] == [c.source for c in paired.cells], "run: jupytext --sync"
    assert any("parameters" in c.metadata.get("tags", []) for c in paired.cells)


def execute(name: str, tmp_path: Path, **parameters: object) -> list[dict]:
    papermill = pytest.importorskip("papermill")
    out = tmp_path / f"{name}.out.ipynb"
    papermill.execute_notebook(
        str(ROOT / "notebooks" / f"{name}.ipynb"),
        str(out),
        parameters=parameters,
        kernel_name="python3",
        cwd=str(ROOT),
        progress_bar=False,
    )
    return json.loads(out.read_text())["cells"]


@pytest.mark.slow
def test_estimator_notebook(tmp_path: Path) -> None:
    execute("estimator", tmp_path, out_dir=str(tmp_path / "est"), tokenizers=["all-minilm-l6-v2 (WordPiece)"])
    assert (tmp_path / "est" / "summary.json").exists()


@pytest.mark.slow
def test_placement_notebook(tmp_path: Path) -> None:
    execute("placement", tmp_path, out_dir=str(tmp_path / "pl"), turns=3, context_window=2048, recompute=True)
    rows = json.loads((tmp_path / "pl" / "placement.json").read_text())["rows"]
    assert {r["placement"] for r in rows} == {"tail", "front"} and len(rows) == 12
