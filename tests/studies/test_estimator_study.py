"""The estimator study against a real tokenizer, on the project's own datasets."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from nomad_lab.studies.budgeting.estimator import CLASSES, Row, collect_samples, run, summarize
from tests.support.paths import ROOT


def test_samples_cover_every_class_deterministically() -> None:
    first, second = collect_samples(ROOT / "datasets"), collect_samples(ROOT / "datasets")
    assert first == second
    assert {s.content_class for s in first} == set(CLASSES)
    assert all(s.text.strip() for s in first)


def test_calibration_learns_a_constant_factor_and_removes_its_error() -> None:
    rows = [Row("t", "prose", f"s{i}", 400, 126 + i % 3, 100, 114, 100) for i in range(40)]
    summary = summarize(rows)
    assert summary.factors["t"] == pytest.approx(1.27, abs=0.02)
    assert summary.errors["t"]["overall"]["segmenter"] == pytest.approx(0.21, abs=0.01)
    assert summary.errors["t"]["overall"]["segmenter+calibrated"] < 0.02
    assert summary.convergence["t"][0][1] > summary.convergence["t"][-1][1]


@pytest.mark.slow
def test_study_runs_on_a_real_tokenizer(tmp_path: Path) -> None:
    summary, paths = run(ROOT / "datasets", tmp_path, ["all-minilm-l6-v2 (WordPiece)"])
    with paths["rows"].open() as handle:
        rows = list(csv.DictReader(handle))
    assert {r["content_class"] for r in rows} == set(CLASSES)
    assert all(int(r["actual"]) > 0 for r in rows)
    overall = summary.errors["all-minilm-l6-v2 (WordPiece)"]["overall"]
    assert all(math.isfinite(v) for v in overall.values())
    assert json.loads(paths["json"].read_text())["factors"]
    assert paths["png"].stat().st_size > 5_000
