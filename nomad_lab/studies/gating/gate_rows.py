"""The rows of the gate leaderboard: a gate spec over its operating range, the reference floor as
shipped, and logistic gates fitted out of fold, each with its figures, curve, calls and milliseconds.

Why apart from the study: the study (``gates.py``) decides which rows a leaderboard holds; this module
turns one spec or one recipe into a scored row the same way for every family, through the gating
service, so a new family needs no new row code.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE
from nomad_lab.data.refusal_kinds import OFF_TOPIC
from nomad_lab.eval.gating import RunData, gather
from nomad_lab.eval.gating.fit import apply_gate, fit_gate, with_features
from nomad_lab.gate import crossval, masks
from nomad_lab.gate.apply import spec_mask, spec_score
from nomad_lab.gate.crossval import Figures
from nomad_lab.gate.families import all_or_nothing
from nomad_lab.gate.logistic_gate import LearnedGate
from nomad_lab.gate.operating_curves import OperatingCurve, curve_from_scores
from nomad_lab.gate.spec import GateSpec

SEED = 1341


@dataclass
class Row:
    name: str
    figures: Figures | None
    calls: float = 0.0
    ms: float = float("nan")
    note: str = ""
    curve: OperatingCurve | None = field(default=None, repr=False)
    family: str = ""
    at_target: tuple[float, float] | None = None  # (leak, recall) where the curve reaches the recall target
    subset: np.ndarray | None = field(default=None, repr=False)
    """Which of the run's questions the figures cover (a judge sample, a transfer row's unseen ones);
    None: all of them."""

    def covers(self, values: np.ndarray) -> np.ndarray:
        """``values`` (one per question of the run) restricted to the questions this row is scored on."""
        return values if self.subset is None else values[self.subset]


def at_target(curve: OperatingCurve, target: float = crossval.RECALL_TARGET) -> tuple[float, float] | None:
    """(leak, recall@5) at the curve's least-leaking point whose recall@5 reaches ``target``."""
    recall, leak = np.asarray(curve.recall, dtype=float), np.asarray(curve.leak, dtype=float)
    meets = np.flatnonzero(recall >= target - 1e-12)
    if not meets.size:
        return None
    best = meets[np.lexsort((-recall[meets], leak[meets]))[0]]
    return float(leak[best]), float(recall[best])


def finish_row(row: Row) -> Row:
    if row.curve is not None:
        row.at_target = at_target(row.curve)
    return row


def mask_row(name: str, data: RunData, points: np.ndarray, mask: np.ndarray, score, splits) -> Row:
    recall, nonempty = masks.evaluate(data.pools, mask)
    figures = crossval.grid_figures(recall, nonempty, data.pools.expect_refusal, splits, score)
    curve = curve_from_scores(data.pools, recall, nonempty, points, name, masks.DEFAULT_K)
    return Row(name, figures, curve=curve)


def _cost(inputs: Mapping[Any, Any], n: int) -> tuple[float, float] | None:
    """(calls or pairs per question, ms per question) that gathering cost, when a gatherer measured it."""
    for value in inputs.values():
        if hasattr(value, "seconds") and hasattr(value, "pairs"):
            return value.pairs / max(1, n), 1000 * value.seconds / max(1, n)
    return None


def spec_row(store: Path, data: RunData, spec: GateSpec, splits: list, name: str | None = None) -> Row:
    """One spec over its whole operating range (the judge's verdict stays one point), out of fold."""
    _, inputs = gather(store, data, spec, progress=True)
    atom = spec.atoms[0]
    started = time.perf_counter()
    points, mask = spec_mask(data.pools, spec, inputs, sweep=atom.family != "judge" or atom.value is not None)
    ms = 1000 * (time.perf_counter() - started) / max(1, data.pools.size * len(points))
    name = name or (f"{spec} (swept)" if len(points) > 1 else str(spec))
    row = mask_row(name, data, points, mask, spec_score(data.pools, spec, inputs), splits)
    row.family, row.ms = atom.family, ms
    cost = _cost(inputs, data.pools.size)
    if cost is not None:
        row.calls, row.ms = cost
    return finish_row(row)


def reference_row(data: RunData) -> Row:
    """The reference floor as shipped: one fixed point, nothing fitted, scored on every question."""
    pools = data.pools
    recall, nonempty = masks.evaluate_score_floors(pools, [RAG_MIN_FINAL_SCORE])
    top = spec_score(pools, "floor")
    figures = crossval.point_figures(recall[0], nonempty[0], pools.expect_refusal, top)
    return Row(
        f"floor@{RAG_MIN_FINAL_SCORE} (the reference, fixed)",
        figures,
        note="in sample: nothing chosen",
        family="floor",
    )


TOPICAL = "topical"
"""The ``--fit`` word for a topicality fit: trained to reject off-topic refusals (and the bank) only."""

Recipe = tuple[tuple[tuple[str, ...], ...], bool, tuple[str, ...] | None]
"""A fitted row: (candidate feature sets, with the bank, the refusal kinds it learns to reject; None: all)."""


def _fit_name(kinds: tuple[tuple[str, ...], ...], with_bank: bool, negatives: tuple[str, ...] | None) -> str:
    sets = " | ".join(" + ".join(k) for k in kinds)
    label = f"choose {sets}" if len(kinds) > 1 else sets + (" only" if len(kinds[0]) == 1 else "")
    fitted_on = "" if negatives is None else f", fit on {' + '.join(negatives)}"
    return f"learned: {label}" + (" + bank" if with_bank else "") + fitted_on


def parse_fit(text: str) -> Recipe:
    """``pool,ce`` / ``pool|pool,ce,bank`` / ``pool,ce,bank,topical``: the candidate feature sets, whether
    the bank joins, and (``topical``) whether only off-topic refusals are the negatives."""
    sets = [tuple(k.strip() for k in part.split(",") if k.strip()) for part in text.split("|")]
    with_bank = any("bank" in s for s in sets)
    negatives = (OFF_TOPIC,) if any(TOPICAL in s for s in sets) else None
    sets = [tuple(k for k in s if k not in ("bank", TOPICAL)) for s in sets]
    if not sets or not all(sets):
        raise NomadLabError(f"study gates: --fit {text!r}: give feature kinds, e.g. pool,ce or pool|pool,ce")
    return tuple(sets), with_bank, negatives


def fit_rows(
    store: Path, data: RunData, bank: RunData | None, fits: list[Recipe], folds: int, repeats: int
) -> tuple[list[Row], dict[str, LearnedGate]]:
    """One out-of-fold row per :data:`Recipe`, and the fitted gates."""
    rows, fitted = [], {}
    for kinds, with_bank, negatives in fits:
        if with_bank and bank is None:
            continue
        name = _fit_name(kinds, with_bank, negatives)
        needed = sorted({k for s in kinds for k in s})
        data = with_features(store, data, needed, progress=True)
        used_bank = with_features(store, bank, needed) if with_bank and bank is not None else None
        result = fit_gate(
            data, list(kinds), used_bank, folds=folds, repeats=repeats, seed=SEED, negatives=negatives
        )
        fitted[name] = result.gate
        started = time.perf_counter()
        apply_gate(result.gate, data)
        ms = 1000 * (time.perf_counter() - started) / max(1, data.pools.size)
        costs = [c for k in result.gate.kinds if (c := data.features.blocks[k].cost) is not None]
        calls, ms = sum(c[0] for c in costs), ms + sum(c[1] for c in costs)
        taught = "every refusal" if negatives is None else " + ".join(negatives) + " refusals"
        note = f"taught to reject {taught}" + (" and the bank" if used_bank is not None else "")
        row = Row(name, result.figures, calls, ms, note, family="learned")
        scores = result.oof[0]
        row.curve = score_curve(data, scores, name)
        rows.append(finish_row(row))
    return rows, fitted


def score_curve(data: RunData, scores: np.ndarray, name: str) -> OperatingCurve:
    points = np.unique(np.quantile(scores[np.isfinite(scores)], np.linspace(0, 1, 101)))
    mask = all_or_nothing(scores, data.pools, points)
    return curve_from_scores(data.pools, *masks.evaluate(data.pools, mask), points, name, masks.DEFAULT_K)
