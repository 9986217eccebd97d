"""``nomad-lab study label-free``'s rows and table: every row's leak is split by refusal kind, its n
summing to the refusals, each kind a column of its own (the off-topic leak first, n in its header),
and two corpora of one name are refused. The measurement end to end needs both repository corpora
(about a minute and a half); its rows come from the same :func:`row_of` tested here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nomad_lab.cli import main
from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.refusal_kinds import NEAR_DOMAIN, OFF_TOPIC
from nomad_lab.eval.gating.label_free_vs_labels import Corpus, compare, row_of
from nomad_lab.gate import crossval
from nomad_lab.publish.results import write
from nomad_lab.studies import registry
from nomad_lab.studies.gating.label_free import result


def _row() -> dict:
    """A fixed point over 4 answerable questions, 3 off-topic refusals (one passes) and 2 near-domain
    ones (both pass)."""
    kinds = np.array(
        ["", "", "", "", OFF_TOPIC, OFF_TOPIC, OFF_TOPIC, NEAR_DOMAIN, NEAR_DOMAIN], dtype=object
    )
    refusal = kinds != ""
    recall = np.where(refusal, np.nan, 1.0)
    nonempty = np.array([1, 1, 1, 1, 1, 0, 0, 1, 1], dtype=bool)
    figures = crossval.point_figures(recall, nonempty, refusal, None)
    return row_of(kinds, "floor/label-free", "floor", "label-free", figures, 0.25)


def test_a_row_splits_its_leak_by_kind_with_n_summing_to_the_refusals() -> None:
    row = _row()
    assert sum(v["n"] for v in row["byKind"].values()) == 5
    assert row["byKind"][OFF_TOPIC]["n"] == 3 and row["byKind"][OFF_TOPIC]["pass"][0] == pytest.approx(
        1 / 3, abs=1e-4
    )
    assert row["byKind"][NEAR_DOMAIN]["pass"][0] == 1.0
    assert "unanswerable" not in row["byKind"]  # no such refusal: no figure, not a zero


def corpus(*rows: dict) -> dict:
    """A corpus of 9 questions (3 off-topic and 2 near-domain refusals, no unanswerable one) with ``rows``."""
    return {
        "name": "mine",
        "other": "theirs",
        "questions": 9,
        "refusals": 5,
        "refusalsByKind": {OFF_TOPIC: 3, "unanswerable": 0, NEAR_DOMAIN: 2},
        "baseRecall": 1.0,
        "pseudoQuestions": 12,
        "pseudoBaseRecall": 0.8,
        "rows": list(rows),
    }


def test_the_table_has_a_column_per_kind_present_with_its_n(tmp_path: Path) -> None:
    out = {
        "command": "nomad-lab study label-free",
        "corpora": [corpus({**_row(), "recallMinusInFold": 0.01})],
    }
    table = result(out).markdown()
    head = next(line for line in table.splitlines() if line.startswith("| gate"))
    assert "off-topic leak (n = 3) [95% CI] | near-domain pass (n = 2) [95% CI]" in head
    assert "unanswerable" not in head and "blended" not in head
    assert "| floor | label-free | 0.250 | 1.000 [1.000, 1.000] | 33.3% [" in table
    paths = write(result(out), tmp_path)
    assert (
        json.loads(paths["label_free.json"].read_text())["corpora"][0]["rows"][0]["byKind"][OFF_TOPIC]["n"]
        == 3
    )


def test_two_corpora_of_one_name_are_refused_through_the_command(tmp_path: Path, capsys) -> None:
    argv = ["study", "label-free", "--corpus-name", "a", "--other-corpus-name", "a"]
    assert main([*argv, "--store", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert "two names" in err and "\n" not in err
    with pytest.raises(NomadLabError, match="two names"):
        compare(tmp_path / "s.duckdb", (Corpus("b", tmp_path, tmp_path),) * 2, "core")


def test_the_study_is_declared_with_its_command_and_out_dir() -> None:
    study = registry.get("label-free")
    assert study.out_dir == "results/label_free" and study.command[:2] == ("study", "label-free")
    defaults = registry.defaults("label-free")
    assert defaults["corpus_name"] != defaults["other_corpus_name"] and defaults["other_bank_skip"] == (
        "coding",
    )
