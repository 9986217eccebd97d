"""What ``study sufficiency`` writes, from a planted result: per-kind pass rates (never blended), the best
row against the zero-shot window, and the markdown tables, on scores where the answer is known."""

from types import SimpleNamespace

import numpy as np

from nomad_lab.gate import crossval
from nomad_lab.studies.gating import sufficiency_report as report
from nomad_lab.studies.gating.sufficiency import STUDY
from nomad_lab.studies.gating.sufficiency_pairs import UnitQuestion

KINDS = [""] * 40 + ["unanswerable"] * 20 + ["off-topic"] * 10 + ["near-domain"] * 10


def planted() -> dict:
    rng = np.random.default_rng(0)
    refusal = np.array([k != "" for k in KINDS])
    y = (~refusal).astype(int)
    groups = np.arange(len(KINDS))
    keep_base = np.where(refusal, np.nan, 1.0)
    nonempty = np.ones(len(KINDS), dtype=bool)
    splits = crossval.repeated_splits(y, groups, 5, 1, 1)
    noise = rng.normal(size=len(KINDS))
    window = noise + y * 1.0  # weak
    units = noise + y * 4.0 - np.array([k == "off-topic" for k in KINDS]) * 4.0  # strong
    rows = []
    for name, score in (("window", window), ("units", units)):
        figures, oof, chosen = crossval.learned_figures(
            lambda tr, te, _, s=score: s[te], y, groups, keep_base, nonempty, splits
        )
        rows.append({"name": name, "spec": "", "figures": figures, "oof": oof, "chosen": chosen})
    pools = SimpleNamespace(
        expect_refusal=refusal, fingerprint="fp", size=len(KINDS), ids=[str(i) for i in KINDS]
    )
    questions = [UnitQuestion(str(i), "q", k != "", k, (), ()) for i, k in enumerate(KINDS)]
    return {
        "run": "r1", "data": SimpleNamespace(pools=pools, embedder={}), "kinds": KINDS,
        "questions": questions,
        "rows": rows, "splits": splits, "units": 8, "pseudo": 3, "typeWeight": 0.0, "threshold": 0.5,
        "examples": {"gold": 1}, "config": SimpleNamespace(epochs=1),
        "seconds": {"total": 1.0, "read": 0.5, "readPairs": 2, "pairs": 4, "trainMean": 0.1, "trainings": 1},
        "timing": {
            "questions": 2, "units": 8, "unitsPerQuestion": 4.0, "msPerQuestion": 50.0,
            "loadAtStart": [1, 1, 1],
        },
    }  # fmt: skip


def test_each_kind_has_its_own_pass_rate_and_the_best_row_is_paired_with_the_window():
    s = report.summary(planted())
    assert s["refusals"] == {"off-topic": 10, "unanswerable": 20, "near-domain": 10}
    best, window = s["bestRow"], s["windowRow"]
    assert best["row"] == "units" and window["row"] == "window"
    unanswerable = best["byKind"]["unanswerable"]["passAtKeepTarget"]
    assert unanswerable[0] < window["byKind"]["unanswerable"]["passAtKeepTarget"][0]
    assert unanswerable[1] <= unanswerable[0] <= unanswerable[2]
    # the off-topic refusals were planted far below everything: they never pass the strong row
    assert best["byKind"]["off-topic"]["passAtKeepTarget"][0] == 0.0
    assert s["paired"]["n"] == 20 and s["paired"]["difference"] < 0
    text = STUDY.result(planted()).markdown()
    assert "| units |" in text and "unanswerable pass" in text and "20 unanswerable" in text
