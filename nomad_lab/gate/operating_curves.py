"""Operating curves: leak rate and recall@k, with intervals, for a gate over a grid of settings.

This is what a researcher asks the workbench for ("which floor, which judge, which combination?"):
one call turns stored pools into a curve with bootstrap bands, the per-tag leak table, the margin
between each floor and the weakest correct top hit, and a calibrated floor for a target leak rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from nomad_lab.data.refusal_kinds import REFUSAL_KINDS
from nomad_lab.gate import masks
from nomad_lab.gate.pools import PoolSet
from nomad_lab.gate.stats import CalibratedFloor, bootstrap_means, calibrated_floor


@dataclass(frozen=True)
class OperatingCurve:
    """One gate's metrics at each setting in ``points``; ``*_lo``/``*_hi`` are 95% bootstrap bounds."""

    gate: str
    points: np.ndarray
    leak: np.ndarray
    leak_lo: np.ndarray
    leak_hi: np.ndarray
    recall: np.ndarray
    recall_lo: np.ndarray
    recall_hi: np.ndarray
    empty_on_answerable: np.ndarray
    leaked: np.ndarray = field(repr=False)  # points × refusal pools (bool)
    recall_per_pool: np.ndarray = field(repr=False)  # points × answerable pools
    refusal_ids: list[str] = field(repr=False, default_factory=list)
    answerable_ids: list[str] = field(repr=False, default_factory=list)
    k: int = masks.DEFAULT_K

    def at(self, point: float) -> dict[str, float]:
        """The row nearest to ``point`` as a plain dict (for tables and notes)."""
        i = int(np.argmin(np.abs(self.points - point)))
        return {
            "point": float(self.points[i]),
            "leak": float(self.leak[i]),
            "leak_lo": float(self.leak_lo[i]),
            "leak_hi": float(self.leak_hi[i]),
            f"recall@{self.k}": float(self.recall[i]),
            "recall_lo": float(self.recall_lo[i]),
            "recall_hi": float(self.recall_hi[i]),
            "empty_on_answerable": float(self.empty_on_answerable[i]),
        }

    def rows(self) -> list[dict[str, float]]:
        return [self.at(float(p)) for p in self.points]

    def calibrated(self, alpha: float, recall_tolerance: float = 0.0) -> CalibratedFloor:
        return calibrated_floor(self.points, self.leaked, self.recall_per_pool, alpha, recall_tolerance)


def curve_from_mask(
    pools: PoolSet, keep: np.ndarray, points: np.ndarray, gate: str, k: int
) -> OperatingCurve:
    """Score a precomputed keep mask (points × pools × width) into an operating curve."""
    return curve_from_scores(pools, *masks.evaluate(pools, keep, k), points, gate, k)


def curve_from_scores(
    pools: PoolSet, recall: np.ndarray, nonempty: np.ndarray, points: np.ndarray, gate: str, k: int
) -> OperatingCurve:
    """Turn per-point, per-pool recall and non-emptiness into rates with bootstrap intervals."""
    refusal = pools.expect_refusal
    answerable = pools.n_relevant > 0
    leaked = nonempty[:, refusal]
    leak, leak_lo, leak_hi = bootstrap_means(leaked.astype(float))
    r, r_lo, r_hi = bootstrap_means(recall[:, answerable])
    with np.errstate(invalid="ignore"):
        empty = (~nonempty[:, answerable]).mean(axis=1) if answerable.any() else np.full(len(points), np.nan)
    return OperatingCurve(
        gate=gate,
        points=np.asarray(points, dtype=float),
        leak=leak,
        leak_lo=leak_lo,
        leak_hi=leak_hi,
        recall=r,
        recall_lo=r_lo,
        recall_hi=r_hi,
        empty_on_answerable=empty,
        leaked=leaked,
        recall_per_pool=recall[:, answerable],
        refusal_ids=[i for i, flag in zip(pools.ids, refusal, strict=True) if flag],
        answerable_ids=[i for i, flag in zip(pools.ids, answerable, strict=True) if flag],
        k=k,
    )


def leak_by_tag(pools: PoolSet, keep: np.ndarray) -> dict[str, tuple[float, int, int]]:
    """Per tag with refusal questions: (leak rate, leaked, refusals) for a single-point keep mask."""
    _, nonempty = masks.evaluate(pools, keep[:1])
    table: dict[str, tuple[float, int, int]] = {}
    for tag in sorted({t for tags in pools.tags for t in tags}):
        mask = np.array([tag in tags for tags in pools.tags]) & pools.expect_refusal
        if mask.any():
            leaked = int(nonempty[0, mask].sum())
            table[tag] = (leaked / int(mask.sum()), leaked, int(mask.sum()))
    return table


def floor_margins(pools: PoolSet, floors: Sequence[float] | np.ndarray) -> np.ndarray:
    """Weakest correct top hit minus each floor: how much room a floor leaves before recall starts to go."""
    weakest = masks.weakest_correct_top_hit(pools)
    return np.full(len(floors), np.nan) if weakest is None else weakest - np.asarray(floors, dtype=float)


def refusals_named(pools: PoolSet, refusal_tag: str) -> np.ndarray:
    """The refusals ``refusal_tag`` names: a refusal kind's name (``off-topic``, ``unanswerable``,
    ``near-domain``) selects that kind, any other value the refusals carrying it as a tag.

    Why a kind first: suites tag near-domain questions ``off-topic, near-domain``, so the tag
    ``off-topic`` would blend a sibling topic into an off-topic leak."""
    if refusal_tag in REFUSAL_KINDS:
        return pools.of_kind(refusal_tag)
    return pools.expect_refusal & np.array([refusal_tag in tags for tags in pools.tags], dtype=bool)


def restrict_refusals(pools: PoolSet, refusal_tag: str | None) -> PoolSet:
    """Keep every answerable pool, and only the refusals ``refusal_tag`` names (None: all)."""
    if refusal_tag is None:
        return pools
    return pools.subset(~pools.expect_refusal | refusals_named(pools, refusal_tag))
