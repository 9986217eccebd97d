"""The decisions file: what every row decided per question, written, read back and re-split."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate import crossval
from nomad_lab.gate.decisions import pass_rates, read_decisions, row_decisions, write_decisions


def _figures() -> tuple[crossval.Figures, list[str], list[str]]:
    """Keep decisions of two repeats over 6 questions: 2 answerable, 2 off-topic, 2 unanswerable."""
    kinds = ["", "", "off-topic", "off-topic", "unanswerable", "unanswerable"]
    refusal = np.array([k != "" for k in kinds])
    keep = np.array([[1, 1, 0, 1, 1, 1], [1, 0, 0, 0, 1, 0]], dtype=bool)
    recall = np.where(refusal, np.nan, 1.0)
    splits = [[(np.array([0, 2, 4]), np.array([1, 3, 5])), (np.array([1, 3, 5]), np.array([0, 2, 4]))]] * 2
    figures = crossval.decision_figures(
        keep, None, recall, np.ones(6, dtype=bool), refusal, None, splits=splits
    )
    figures.extra["score"] = np.arange(12, dtype=float).reshape(2, 6) / 10
    return figures, [f"q{i}" for i in range(6)], kinds


def test_decisions_round_trip_and_recompute_each_kinds_rate(tmp_path: Path) -> None:
    figures, ids, kinds = _figures()
    path = write_decisions(tmp_path / "d.csv.gz", row_decisions("g", figures.extra, ids, kinds))
    decisions = read_decisions(path)
    assert len(decisions) == 12 and decisions[3].fold == 0 and decisions[3].score == pytest.approx(0.3)
    rates = pass_rates(decisions, "g")
    kinds_array = np.array(kinds)
    for kind in ("off-topic", "unanswerable"):
        assert rates[kind] == pytest.approx(crossval.pass_rate(figures, kinds_array == kind)[0])
    assert rates["off-topic"] == pytest.approx(0.25) and rates["unanswerable"] == pytest.approx(0.75)
    assert rates[""] == pytest.approx(0.75)  # answerable questions kept
    with pytest.raises(NomadLabError, match="no decisions of row 'other'"):
        pass_rates(decisions, "other")


def test_the_same_decisions_write_the_same_bytes(tmp_path: Path) -> None:
    figures, ids, kinds = _figures()
    a = write_decisions(tmp_path / "a.csv.gz", row_decisions("g", figures.extra, ids, kinds)).read_bytes()
    b = write_decisions(tmp_path / "b.csv.gz", row_decisions("g", figures.extra, ids, kinds)).read_bytes()
    assert a == b


def test_a_broken_decisions_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "d.csv.gz"
    with gzip.open(path, "wt") as handle:
        handle.write("row,repeat,fold,question,kind,score,kept\ng,0,1,q,,0.5,1\ng,zero,1,q,,0.5,1\n")
    with pytest.raises(NomadLabError, match=r"d\.csv\.gz:3: invalid literal"):
        read_decisions(path)
    with gzip.open(path, "wt") as handle:
        handle.write("row,repeat\n")
    with pytest.raises(NomadLabError, match=r"d\.csv\.gz:1: expected the header"):
        read_decisions(path)
