"""Comparing leaderboard rows fairly: which rows reach the recall target out of fold, the best of
them, its paired test against the floor over the same questions, and which refusal kinds it still lets
through."""

from __future__ import annotations

from typing import Any

import numpy as np

from nomad_lab.gate import crossval
from nomad_lab.gate.stats import mcnemar_exact, paired_bootstrap
from nomad_lab.studies.gating.gate_rows import Row


def reaches_target(row: Row) -> bool:
    """Whether the row's out-of-fold recall at its training-chosen point reaches the recall target."""
    return row.figures is not None and row.figures.recall_at_recall[0] >= crossval.RECALL_TARGET - 1e-9


def best_row(rows: list[Row]) -> Row | None:
    """The least-leaking row at its recall point among the out-of-fold rows that reach the target (or,
    when none does, among all out-of-fold rows), fixed, transfer and sample rows aside (a sample row is
    scored on other questions)."""
    scored = [
        r
        for r in rows
        if r.figures is not None and r.family not in ("transfer", "sample", "") and "fixed" not in r.name
    ]
    pool = [r for r in scored if reaches_target(r)] or scored
    return min(pool, key=lambda r: r.figures.leak_at_recall[0]) if pool else None


def paired_test(best: Row, floor: Row, refusal: np.ndarray, base_recall: np.ndarray) -> dict[str, Any]:
    """Best row against the floor at their recall points: paired over the same refusals (McNemar on each
    refusal's majority outcome over repeats, and a paired bootstrap of the repeat-averaged leak) and over
    the same answerable questions (paired bootstrap of recall@5)."""
    a, b = floor.figures.extra["leaked"][refusal], best.figures.extra["leaked"][refusal]
    answerable = ~np.isnan(base_recall)
    ra, rb = floor.figures.extra["recall"][answerable], best.figures.extra["recall"][answerable]
    mcnemar = mcnemar_exact(a > 0.5, b > 0.5)
    leak, recall = paired_bootstrap(a, b), paired_bootstrap(ra, rb)
    return {
        "best": best.name,
        "baseline": floor.name,
        "leak": {
            "difference": leak.statistic,
            "low": leak.low,
            "high": leak.high,
            "p": leak.p_value,
            "n": leak.n,
            "method": leak.method,
        },
        "leakMcNemar": {
            "difference": mcnemar.statistic,
            "p": mcnemar.p_value,
            "n": mcnemar.n,
            "method": "exact McNemar on each refusal's majority outcome over repeats",
        },
        "recall": {
            "difference": recall.statistic,
            "low": recall.low,
            "high": recall.high,
            "p": recall.p_value,
            "n": recall.n,
            "method": recall.method,
        },
        "significant": bool(leak.p_value < 0.05 and leak.high < 0),
    }


def leak_by_tag(row: Row, tags: list[list[str]], refusal: np.ndarray) -> list[dict[str, Any]]:
    """The row's repeat-averaged leak at its recall point per refusal tag (which kinds still pass)."""
    leaked = row.figures.extra["leaked"]
    out: dict[str, list[float]] = {}
    for i in np.flatnonzero(refusal):
        for tag in tags[i]:
            out.setdefault(tag, []).append(float(leaked[i]))
    return [
        {"tag": t, "refusals": len(v), "leaked": float(np.sum(v)), "leak": float(np.mean(v))}
        for t, v in sorted(out.items())
    ]
