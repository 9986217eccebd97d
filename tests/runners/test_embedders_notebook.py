"""The embedders notebook runs its parameters (embedder spec strings) through the library, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.paths import FIXTURES, ROOT


@pytest.mark.slow
def test_embedders_notebook_compares_two_real_embedders(tmp_path: Path) -> None:
    from nomad_lab.runners.notebooks import execute_notebook

    out_dir = tmp_path / "out"
    parameters = {
        "embedder": ["wordllama:", "wordllama:64"],  # two real models (Matryoshka cuts), both light
        "corpus": str(FIXTURES / "retrieval" / "corpus"),
        "goldens": str(FIXTURES / "retrieval" / "goldens"),
        "store": str(tmp_path / "ws.duckdb"),
        "out_dir": str(out_dir),
    }
    execute_notebook(ROOT / "notebooks" / "embedders.py", tmp_path / "e.ipynb", parameters, cell_timeout=180)
    data = json.loads((out_dir / "embedders.json").read_text())
    assert [row["embedder"]["spec"] for row in data["embedders"]] == ["wordllama:", "wordllama:64"]
    assert {row["embedder"]["dimension"] for row in data["embedders"]} == {256, 64}
    assert len(data["transfer"]) == 2
    presets = json.loads((out_dir / "presets-wordllama-64.json").read_text())
    assert presets["embedder"]["spec"] == "wordllama:64" and set(presets["presets"]) == {
        "off",
        "lenient",
        "balanced",
        "strict",
    }
