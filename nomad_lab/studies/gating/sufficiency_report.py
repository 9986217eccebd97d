"""What ``study sufficiency`` publishes, as a value (its page built from the stored summary alone): per
row, each refusal kind's pass rate at answerable keep >= 0.90 (never blended), the keep reached, ROC AUC
answerable vs unanswerable, the paired test of the best row against the zero-shot window, the cost, and
the gate file (JSON + INT8 head)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.data.refusal_kinds import NEAR_DOMAIN, OFF_TOPIC, REFUSAL_KINDS, UNANSWERABLE
from nomad_lab.data.sentence_units import UNIT_WORDS
from nomad_lab.eval.gating.fit import figures_json
from nomad_lab.gate import crossval
from nomad_lab.gate.answer_file import SufficiencyGate
from nomad_lab.gate.stats import bootstrap_means, paired_bootstrap
from nomad_lab.retrieval.answer_cache import save_gate_files
from nomad_lab.studies.gating.answer_report import examples_line, training_costs, training_record
from nomad_lab.studies.result import Field, Page, Table, Value, listing

GATE_NAME = "sufficiency-gate.json"


def _kind_mask(result: dict[str, Any], kind: str) -> np.ndarray:
    return np.array([k == kind for k in result["kinds"]], dtype=bool)


def by_kind(result: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """Each refusal kind's out-of-fold pass rate (its context kept) with a bootstrap interval."""
    passed = row["figures"].extra["leaked"]
    out = {}
    for kind in REFUSAL_KINDS:
        mask = _kind_mask(result, kind)
        mean, lo, hi = bootstrap_means(passed[mask][None])
        out[kind] = {"n": int(mask.sum()), "passAtKeepTarget": [float(mean[0]), float(lo[0]), float(hi[0])]}
    return out


def unanswerable_auc(result: dict[str, Any], row: dict[str, Any]) -> list[float]:
    """ROC AUC of the row's out-of-fold scores, answerable against unanswerable refusals only."""
    refusal = result["data"].pools.expect_refusal
    mask = ~refusal | _kind_mask(result, UNANSWERABLE)
    return list(crossval.auc_interval(row["oof"][:, mask], ~refusal[mask]))


def _row_json(result: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    f = figures_json(row["figures"])
    return {
        "row": row["name"],
        "spec": row["spec"],
        "answerableKeep": f["recallAtRecallTarget"],
        "keepTargetReachedInTraining": f["recallTargetReachedInTraining"],
        "byKind": by_kind(result, row),
        "rocAucAnswerableVsUnanswerable": unanswerable_auc(result, row),
        "typeWeightsChosen": sorted({float(c) for c in row["chosen"] if c is not None}),
    }


def _paired(result: dict[str, Any], table: list[dict[str, Any]]) -> dict[str, Any]:
    """The row passing fewest unanswerable refusals (among those reaching the keep target) against the
    zero-shot window row, paired over the same unanswerable refusals."""
    mask = _kind_mask(result, UNANSWERABLE)
    reach = [r for r in table[1:] if r["answerableKeep"][0] >= crossval.RECALL_TARGET - 1e-9] or table[1:]
    best = min(reach, key=lambda r: r["byKind"][UNANSWERABLE]["passAtKeepTarget"][0])
    rows = {r["name"]: r for r in result["rows"]}
    a = rows[table[0]["row"]]["figures"].extra["leaked"][mask]
    b = rows[best["row"]]["figures"].extra["leaked"][mask]
    test = paired_bootstrap(a, b)
    return {
        "best": best["row"],
        "baseline": table[0]["row"],
        "difference": test.statistic,
        "low": test.low,
        "high": test.high,
        "p": test.p_value,
        "n": test.n,
        "method": test.method,
    }


def summary(result: dict[str, Any]) -> dict[str, Any]:
    data = result["data"]
    table = [_row_json(result, r) for r in result["rows"]]
    paired = _paired(result, table)
    answerable = [q for q in result["questions"] if not q.expect_refusal and q.must_include]
    return {
        "run": result["run"],
        "fingerprint": data.pools.fingerprint,
        "questions": data.pools.size,
        "answerable": int((~data.pools.expect_refusal).sum()),
        "refusals": {k: int(_kind_mask(result, k).sum()) for k in REFUSAL_KINDS},
        "folds": len(result["splits"][0]),
        "repeats": len(result["splits"]),
        "keepTarget": crossval.RECALL_TARGET,
        "rows": table,
        "paired": paired,
        "bestRow": next(r for r in table if r["row"] == paired["best"]),
        "windowRow": table[0],
        "answerRead": {
            "questions": len(answerable),
            "read": sum(q.answer_read for q in answerable),
            "share": float(np.mean([q.answer_read for q in answerable])) if answerable else float("nan"),
        },
        "units": result["units"],
        "pseudoQuestions": result["pseudo"],
        "typeWeight": result["typeWeight"],
        "threshold": result["threshold"],
        "examples": result["examples"],
        "seconds": result["seconds"],
        "timing": result["timing"],
        "config": vars(result["config"]),
    }


def rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    return summary(result)["rows"]


def _kind_field(kind: str) -> Field:
    return Field(f"byKind.{kind}.passAtKeepTarget", f"{kind} pass", "share", ".1f", 100, "%")


ROW_FIELDS = (
    Field("row", "check"),
    replace(_kind_field(UNANSWERABLE), label=f"{UNANSWERABLE} pass [95% CI]"),
    Field("answerableKeep", "answerable keep reached", "share", ".3f"),
    _kind_field(NEAR_DOMAIN),
    _kind_field(OFF_TOPIC),
    Field("rocAucAnswerableVsUnanswerable", f"ROC AUC answerable vs {UNANSWERABLE}", "", ".3f"),
    Field("spec", "spec", absent="-", code=True),
)


def pages(s: Mapping[str, Any]) -> tuple[Page, ...]:
    """``sufficiency.md`` from the stored summary alone (so it can be rebuilt from the JSON)."""
    n, pt, timing, read = s["refusals"], s["paired"], s["timing"], s["answerRead"]
    costs = [
        (
            "ms per question (cut, choose, body over the units, head; uncached)",
            Value(timing["msPerQuestion"], "ms", ".0f"),
        ),
        (
            f"units per question (timed sample of {timing['questions']})",
            Value(timing["unitsPerQuestion"], "count", ".1f"),
        ),
        (
            "load average (1, 5, 15 min) when the study began",
            Value(", ".join(f"{v:.2f}" for v in timing["loadAtStart"]), "load"),
        ),
        (
            "answerable questions with a mustInclude answer unit among the units read",
            Value(f"{read['read']} of {read['questions']} ({100 * read['share']:.0f}%)", "count"),
        ),
        ("pseudo-questions drafted from the corpus", Value(s["pseudoQuestions"], "count")),
        *training_costs(s["seconds"]),
    ]
    intro = (
        f"Sufficiency check, run {s['run']} ({s['answerable']} answerable; refusals: "
        + ", ".join(f"{n[k]} {k}" for k in REFUSAL_KINDS)
        + f"), {s['folds']}x{s['repeats']} grouped folds, thresholds chosen inside training folds for "
        f"answerable keep >= {s['keepTarget']:.2f}; {s['units']} sentence units read per question."
    )
    paired = (
        f"Paired over the same {pt['n']} {UNANSWERABLE} refusals, {pt['best']} against {pt['baseline']}: "
        f"pass difference {100 * pt['difference']:+.1f} points "
        f"[{100 * pt['low']:+.1f}, {100 * pt['high']:+.1f}] ({pt['method']}, p {pt['p']:.3g})."
    )
    table = Table("checks", ROW_FIELDS, tuple(s["rows"]))
    costs_table = listing("cost", ("cost and coverage", "value"), costs)
    return (Page("sufficiency.md", (intro, table, paired, costs_table, examples_line(s))),)


def save_gate(result: dict[str, Any], path: Path) -> Path:
    """The final head (fitted on every question and the pseudo-questions) as ``sufficiency-gate.json``
    (``path``) + its INT8 ``.npz``, with the unit settings and the answer-type weight the folds chose
    most."""
    data = result["data"]
    s = summary(result)
    training = training_record(s, data.pools.ids)
    scoring = {"units": s["units"], "unitWords": UNIT_WORDS, "typeWeight": s["typeWeight"]}
    return save_gate_files(
        path, result["head"], result["body"], result["threshold"], data.embedder, training,
        s["rows"][-1], kind=SufficiencyGate, scoring=scoring,
    )  # fmt: skip
