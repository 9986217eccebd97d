"""Thresholds without labels: the most selective point meeting the target on drafted pseudo-questions,
and ``gate fit --no-labels`` end to end on the fixture corpus with real MiniLM (no golden read)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nomad_lab.cli import main
from nomad_lab.eval.gating.label_free_thresholds import most_selective_point
from nomad_lab.store import Store
from tests.support.paths import CORPUS, FIXTURES

BANK = FIXTURES / "gates" / "bank.jsonl"


def test_the_most_selective_point_that_still_meets_the_target() -> None:
    recall = np.array(
        [
            [1.0, 1.0, 1.0, 1.0, np.nan],  # loosest: 1.0
            [1.0, 1.0, 1.0, 0.0, np.nan],  # 0.75
            [1.0, 1.0, 0.0, 0.0, np.nan],  # 0.5
        ]
    )
    assert most_selective_point(recall, 0.7) == (1, True)
    assert most_selective_point(recall, 0.75) == (1, True)
    assert most_selective_point(recall, 0.5) == (2, True)
    assert most_selective_point(recall[1:], 0.9) == (0, False)  # out of reach: keep the most


def test_gate_fit_without_labels_drafts_retrieves_and_fits(tmp_path: Path, embedder, capsys) -> None:
    store, gate = tmp_path / "store.duckdb", tmp_path / "g.json"
    argv = ["gate", "fit", "--no-labels", "--corpus", str(CORPUS), "--store", str(store), "--out", str(gate)]
    assert main([*argv, "--bank", str(BANK), "--folds", "2"]) == 0
    printed = capsys.readouterr().out
    assert "pseudo-questions drafted from" in printed and "no labels used" in printed
    assert "label-free floor for recall@5 >= 0.9: " in printed
    saved = json.loads(gate.read_text())
    assert saved["training"]["labels"].startswith("none") and 0.0 <= saved["threshold"] <= 1.0
    with Store(store) as opened:  # the pseudo run holds drafted questions only, each with its document
        cases = opened.get_cases(saved["training"]["run"])
    assert cases and all(c.golden_id.startswith("draft-") for c in cases)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--corpus", str(CORPUS), "--no-bank"], "keep a bank"),
        (["--corpus", str(CORPUS), "--run", "r1"], "--run names a labelled run"),
        (["--corpus", str(CORPUS), "--features", "pool|pool,query"], "one feature set"),
    ],
)
def test_gate_fit_without_labels_refuses_bad_options(
    tmp_path: Path, capsys, extra: list, message: str
) -> None:
    argv = ["gate", "fit", "--no-labels", "--store", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "g")]
    assert main([*argv, *extra]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
