"""The published leaderboards re-split from their stored decisions: every row's per-kind figure on the page
is what its per-question decisions give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nomad_lab.data.refusal_kinds import REFUSAL_KINDS
from nomad_lab.gate.decisions import pass_rates, read_decisions
from tests.support.paths import ROOT

FOLDERS = sorted(p.parent for p in (ROOT / "results" / "gates").rglob("decisions.csv.gz"))


def test_every_published_leaderboard_stores_its_decisions() -> None:
    published = sorted(p.parent for p in (ROOT / "results" / "gates").rglob("gates.json"))
    assert published and published == FOLDERS


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_rows_kinds_recompute_from_its_decisions(folder: Path) -> None:
    summary = json.loads((folder / "gates.json").read_text())
    decisions = read_decisions(folder / "decisions.csv.gz")
    scored = [row for row in summary["rows"] if row.get("byKind")]
    assert {d.row for d in decisions} == {row["gate"] for row in scored}
    for row in scored:
        rates = pass_rates(decisions, row["gate"])
        assert set(row["byKind"]) <= set(REFUSAL_KINDS)
        for kind, figures in row["byKind"].items():
            assert rates[kind] == pytest.approx(figures["passAtRecallTarget"][0], abs=1e-9), (
                row["gate"],
                kind,
            )
    kinds = {d.question: d.kind for d in decisions}
    counted = {k: sum(1 for v in kinds.values() if v == k) for k in REFUSAL_KINDS}
    assert {k: v for k, v in counted.items() if v} == {
        k: v for k, v in summary["refusalsByKind"].items() if v
    }
