"""The estimator study against a real tokenizer, on the project's own datasets."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from nomad_lab.backends.tokenizers import GGUF_FILES, TOKENIZERS
from nomad_lab.core.token_estimator import estimate_tokens
from nomad_lab.publish.results import write
from nomad_lab.runners.studies import run_study
from nomad_lab.studies.budgeting.estimator import CLASSES, Row, collect_samples, rows_from_csv, summarize
from tests.support.paths import ROOT


def test_samples_cover_every_class_deterministically() -> None:
    first, second = collect_samples(ROOT / "datasets"), collect_samples(ROOT / "datasets")
    assert first == second
    assert {s.content_class for s in first} == set(CLASSES)
    assert all(s.text.strip() for s in first)


def test_calibration_learns_a_constant_factor_and_removes_its_error() -> None:
    bases = json.dumps({"prose": 80.0, "table": 20.0})
    rows = [
        Row("t", "prose", f"s{i}", 400, 126 + i % 3, 100, 114, 100, bases, 126 + i % 3) for i in range(40)
    ]
    summary = summarize(rows)
    assert summary.factors["t"] == pytest.approx(1.27, abs=0.02)
    assert summary.errors["t"]["overall"]["segmenter"] == pytest.approx(0.21, abs=0.01)
    assert summary.errors["t"]["overall"]["segmenter+calibrated"] < 0.02
    assert summary.convergence["t"][0][1] > summary.convergence["t"][-1][1]
    # content-aware: the dominant class (prose, 80%) learns (actual - table share) / prose base
    assert summary.class_factors["t"]["prose"] == pytest.approx((127 - 20) / 80, abs=0.02)
    assert summary.errors["t"]["overall"]["content-aware+calibrated"] < 0.02
    assert summary.errors["t"]["overall"]["exact"] == 0.0


def test_rows_from_csv_keep_the_real_counts_and_refuse_changed_samples(tmp_path: Path) -> None:
    sample = collect_samples(ROOT / "datasets")[0]
    path = tmp_path / "rows.csv"
    header = "tokenizer,content_class,sample_id,chars,actual,chars_4,chars_3_5,segmenter\n"
    path.write_text(header + f"t,prose,{sample.sample_id},{len(sample.text)},77,0,0,0\n")
    (row,) = rows_from_csv(path, ROOT / "datasets")
    assert (row.actual, row.segmenter, row.exact) == (77, estimate_tokens(sample.text), None)
    path.write_text(header + f"t,prose,{sample.sample_id},{len(sample.text) + 1},77,0,0,0\n")
    with pytest.raises(ValueError, match=r"rows\.csv:2: sample"):
        rows_from_csv(path, ROOT / "datasets")


@pytest.mark.slow
def test_the_segmenter_beats_chars_over_4_on_every_real_tokenizer(tmp_path: Path) -> None:
    """The study's headline: on each real tokenizer (three families), the structural segmenter's mean
    error on the held-out halves is below the fixed chars/4 divisor's, overall and on code and CJK."""
    result, paths = run_study(
        "estimator", write, datasets=ROOT / "datasets", out=tmp_path, tokenizer=list(TOKENIZERS)
    )
    summary = result.value.summary
    with paths["rows.csv"].open() as handle:
        rows = list(csv.DictReader(handle))
    assert {r["tokenizer"] for r in rows} == set(TOKENIZERS)
    assert {r["content_class"] for r in rows} == set(CLASSES)
    assert all(int(r["actual"]) > 0 for r in rows)
    for name in TOKENIZERS:
        errors = summary.errors[name]
        for group in ("overall", "code", "cjk"):
            assert errors[group]["segmenter"] < errors[group]["chars/4"], (name, group)
        exact = errors["overall"][
            "exact"
        ]  # the model's own tokenizer: 0 by construction, where a GGUF exists
        assert exact == pytest.approx(0.0, abs=1e-12) if name in GGUF_FILES else math.isnan(exact)
    assert set(json.loads(paths["summary.json"].read_text())["factors"]) == set(TOKENIZERS)
    assert paths["convergence.png"].stat().st_size > 5_000


@pytest.mark.parametrize("name", list(TOKENIZERS))
def test_each_tokenizer_counts_a_short_text_without_padding_or_specials(name: str) -> None:
    """A count is the text's own tokens: the packaged MiniLM tokenizer.json pads to 128 unless told not to."""
    from nomad_lab.backends.tokenizers import load_tokenizer

    count = load_tokenizer(name)
    assert 1 <= count("hello world") <= 3
    assert count("hello world " * 100) > 100  # and no truncation at the 128 the file also sets
