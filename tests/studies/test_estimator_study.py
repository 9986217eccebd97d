"""The estimator study against a real tokenizer, on the project's own datasets."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from nomad_lab.backends.tokenizers import TOKENIZERS
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
def test_the_segmenter_beats_chars_over_4_on_every_real_tokenizer(tmp_path: Path) -> None:
    """The study's headline: on each real tokenizer (three families), the structural segmenter's mean
    error on the held-out halves is below the fixed chars/4 divisor's, overall and on code and CJK."""
    summary, paths = run(ROOT / "datasets", tmp_path, list(TOKENIZERS))
    with paths["rows"].open() as handle:
        rows = list(csv.DictReader(handle))
    assert {r["tokenizer"] for r in rows} == set(TOKENIZERS)
    assert {r["content_class"] for r in rows} == set(CLASSES)
    assert all(int(r["actual"]) > 0 for r in rows)
    for name in TOKENIZERS:
        errors = summary.errors[name]
        for group in ("overall", "code", "cjk"):
            assert errors[group]["segmenter"] < errors[group]["chars/4"], (name, group)
    assert set(json.loads(paths["json"].read_text())["factors"]) == set(TOKENIZERS)
    assert paths["png"].stat().st_size > 5_000
