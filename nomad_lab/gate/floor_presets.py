"""Named floor presets (Off / Lenient / Balanced / Strict) for one embedding model, with intervals.

Why presets are computed, not typed in: a score floor is a property of the embedding model (MiniLM's
cosines run lower than nomic-embed-text's), so the reference's per-model defaults can only be carried to
another model by measuring them on that model's pools. Each preset is a rule, fixed here and documented,
never tuned to a corpus:

- **Off**: no floor (0).
- **Lenient**: the highest floor that costs at most 0.01 of mean recall@k against no floor.
- **Balanced**: the highest floor that costs at most 0.05 of mean recall@k.
- **Strict**: the lowest floor whose one-sided 95% Clopper–Pearson upper bound on the leak rate is at most
  0.10 (``stats.calibrated_floor``); undefined when the refusal questions are too few to show it.

"Highest floor costing at most b" scans floors upward and stops before the first that costs more, so a
floor past a recall dip is never chosen. The interval of each preset's floor is the 2.5–97.5 percentile
of the floor the same rule picks on each of 2,000 seeded bootstrap resamples of the questions (answerable
and refusal questions resampled separately, as each rule reads only one kind).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nomad_lab.gate.operating_curves import OperatingCurve
from nomad_lab.gate.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, clopper_pearson_upper

__all__ = ["PRESETS", "PresetFloor", "PresetRule", "leak_bound_floor", "preset_floors", "recall_budget_floor"]


@dataclass(frozen=True)
class PresetRule:
    """``kind``: ``off``, ``recall_loss`` (``target``: recall budget), ``leak_upper`` (``target``: alpha)."""

    name: str
    kind: str
    target: float
    rule: str


PRESETS = (
    PresetRule("off", "off", 0.0, "no floor"),
    PresetRule("lenient", "recall_loss", 0.01, "highest floor losing <= 0.01 mean recall@k vs no floor"),
    PresetRule("balanced", "recall_loss", 0.05, "highest floor losing <= 0.05 mean recall@k vs no floor"),
    PresetRule("strict", "leak_upper", 0.10, "lowest floor with 95% upper bound on leak rate <= 0.10"),
)


@dataclass(frozen=True)
class PresetFloor:
    """A preset's floor (None: the rule cannot be met), its bootstrap interval, and the curve there."""

    rule: PresetRule
    floor: float | None
    low: float | None
    high: float | None
    undefined_share: float  # share of resamples in which the rule could not be met
    leak: float | None
    leak_ci: tuple[float, float] | None
    recall: float | None
    recall_ci: tuple[float, float] | None


def recall_budget_floor(floors: np.ndarray, recall: np.ndarray, budget: float) -> float:
    """The highest of the ascending ``floors`` before mean ``recall`` first drops more than ``budget``
    below its value at the lowest floor (``recall``: one mean per floor)."""
    base = recall[0]
    over = np.flatnonzero(recall < base - budget - 1e-12)
    last = (over[0] - 1) if over.size else len(floors) - 1
    return float(floors[max(last, 0)])


def leak_bound_floor(
    floors: np.ndarray, leaked_counts: np.ndarray, trials: int, alpha: float
) -> float | None:
    """The lowest of the ascending ``floors`` whose Clopper–Pearson upper bound on leak is <= ``alpha``."""
    for floor, events in zip(floors, leaked_counts, strict=True):
        if clopper_pearson_upper(round(events), trials) <= alpha:
            return float(floor)
    return None


def _pick(
    rule: PresetRule, floors: np.ndarray, recall: np.ndarray, leaks: np.ndarray, n: int
) -> float | None:
    if rule.kind == "off":
        return 0.0
    if rule.kind == "recall_loss":
        return None if np.isnan(recall).all() else recall_budget_floor(floors, recall, rule.target)
    return leak_bound_floor(floors, leaks, n, rule.target)


def _resampled(values: np.ndarray, resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per resample and point: weighted sums of ``values`` (points × questions, NaN undefined) and the
    weights of defined entries."""
    n = values.shape[1]
    if n == 0:
        empty = np.zeros((resamples, values.shape[0]))
        return empty, empty
    w = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(float)
    defined = ~np.isnan(values)
    return w @ np.where(defined, values, 0.0).T, w @ defined.T.astype(float)


def preset_floors(
    curve: OperatingCurve, presets: tuple[PresetRule, ...] = PRESETS, resamples: int = BOOTSTRAP_RESAMPLES
) -> list[PresetFloor]:
    """Every preset's floor on a score-floor ``curve`` (its points ascending), with intervals."""
    order = np.argsort(curve.points, kind="stable")
    floors = curve.points[order]
    recall_rows = curve.recall_per_pool[order]
    leaked = curve.leaked[order].astype(float)
    n_refusal = leaked.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.nanmean(recall_rows, axis=1) if recall_rows.shape[1] else np.full(len(floors), np.nan)
        recall_sums, recall_weights = _resampled(recall_rows, resamples, BOOTSTRAP_SEED)
        boot_recall = recall_sums / recall_weights
    boot_leaks, _ = _resampled(leaked, resamples, BOOTSTRAP_SEED + 1)
    results = []
    for rule in presets:
        floor = _pick(rule, floors, recall, leaked.sum(axis=1), n_refusal)
        picks = [_pick(rule, floors, boot_recall[b], boot_leaks[b], n_refusal) for b in range(resamples)]
        defined = np.array([p for p in picks if p is not None], dtype=float)
        low, high = (float(v) for v in np.percentile(defined, [2.5, 97.5])) if defined.size else (None, None)
        row = curve.at(floor) if floor is not None else None
        results.append(
            PresetFloor(
                rule,
                floor,
                low,
                high,
                1.0 - defined.size / resamples,
                None if row is None else row["leak"],
                None if row is None else (row["leak_lo"], row["leak_hi"]),
                None if row is None else row[f"recall@{curve.k}"],
                None if row is None else (row["recall_lo"], row["recall_hi"]),
            )
        )
    return results
