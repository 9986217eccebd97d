"""Comparing leaderboard rows fairly: which rows reach the recall target out of fold, the best of
them, its paired test against the floor over the same questions, and which refusal kinds it still lets
through."""

from __future__ import annotations

from typing import Any

import numpy as np

from nomad_lab.data.refusal_kinds import REFUSAL_KINDS
from nomad_lab.gate import crossval
from nomad_lab.gate.stats import mcnemar_exact, paired_bootstrap
from nomad_lab.studies.gating.gate_rows import Row


def reaches_target(row: Row) -> bool:
    """Whether the row's out-of-fold recall at its training-chosen point reaches the recall target."""
    return row.figures is not None and row.figures.recall_at_recall[0] >= crossval.RECALL_TARGET - 1e-9


def headline_leak(row: Row, headline: np.ndarray | None = None) -> float:
    """The row's leak at its recall point on the ``headline`` refusals (the off-topic ones), or on every
    refusal when there are none of them."""
    rate = None if headline is None else crossval.pass_rate(row.figures, headline)
    return row.figures.leak_at_recall[0] if rate is None else rate[0]


def best_row(rows: list[Row], headline: np.ndarray | None = None) -> Row | None:
    """The least-leaking row at its recall point on the ``headline`` refusals (the off-topic ones: the
    reference's question) among the out-of-fold rows that reach the target (or, when none does, among
    all out-of-fold rows), fixed, transfer and sample rows aside (a sample row is scored on other
    questions)."""
    scored = [
        r
        for r in rows
        if r.figures is not None and r.family not in ("transfer", "sample", "") and "fixed" not in r.name
    ]
    pool = [r for r in scored if reaches_target(r)] or scored
    return min(pool, key=lambda r: headline_leak(r, headline)) if pool else None


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


def leak_by_tag(row: Row, tags: list[list[str]], kinds: np.ndarray) -> list[dict[str, Any]]:
    """The row's repeat-averaged pass rate at its recall point per refusal kind and tag (which refusals
    still pass), kinds in their order (off-topic first), tags sorted within each."""
    leaked = row.figures.extra["leaked"]
    out: dict[tuple[int, str, str], list[float]] = {}
    for i in np.flatnonzero(kinds != ""):
        kind = str(kinds[i])
        for tag in tags[i]:
            out.setdefault((REFUSAL_KINDS.index(kind), kind, tag), []).append(float(leaked[i]))
    return [
        {"kind": k, "tag": t, "refusals": len(v), "leaked": float(np.sum(v)), "leak": float(np.mean(v))}
        for (_, k, t), v in sorted(out.items())
    ]


def by_kind(row: Row, kinds: np.ndarray) -> dict[str, dict[str, Any]]:
    """Each refusal kind's pass rate at the row's recall point, with its n and interval ({}: no figures)."""
    return {} if row.figures is None else crossval.kind_figures(row.figures, kinds, REFUSAL_KINDS)
