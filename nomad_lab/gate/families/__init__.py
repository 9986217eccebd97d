"""The gate families by spec word: each family is one small module that registers one :class:`Family`.

Why a registry: a gate spec (``floor@0.62``, ``judge:embedded:gemma3-270m@0.5``, ``learned:gates/x.json``)
is parsed in one place (:mod:`nomad_lab.gate.spec`) from what each family declares here: whether it takes
a target (a backend spec, a gate file), what its number means, its allowed range and what an omitted
number means. Adding a gate is one module in this package and one line in ``MODULES``.

Every family turns its spec into a keep mask shaped ``(points, pools, width)`` like ``gate.gates`` does,
from the pools and the :class:`GateInputs` a caller has gathered (verdicts, P(true), features).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from nomad_lab.gate.pools import PoolSet

GateAtom = Any  # a ``gate.spec.GateAtom`` (family, target, value); named here without importing the parser

MODULES = ("floor", "cosine", "contrast", "judge", "learned")
"""The family modules, in the order the accepted forms are listed."""

OMIT_SWEEP = "sweep"  # an omitted number sweeps the family's grid
OMIT_VERDICT = "verdict"  # an omitted number means the judge's all-or-nothing verdict
OMIT_SAVED = "saved"  # an omitted number means the threshold saved in the gate file


@dataclass(frozen=True)
class GateInputs:
    """What a caller gathered beyond the pools, one entry per pool (NaN: none).

    ``verdicts`` and ``p_true`` are keyed by judge spec; ``features`` is a
    :class:`nomad_lab.gate.features.FeatureTable` (pool statistics and the query embedding), needed
    by ``learned:`` gates.
    """

    verdicts: Mapping[str, np.ndarray] = field(default_factory=dict)
    p_true: Mapping[str, np.ndarray] = field(default_factory=dict)
    features: Any = None


@dataclass(frozen=True)
class Family:
    """One gate family as the parser and the evaluator see it.

    ``target``: whether a target follows the word after ``:`` (a backend spec, a gate file path).
    ``value``: what the number after ``@`` is, within ``[low, high]`` (``high`` None: unbounded), and
    ``omitted`` what leaving it out means. ``grid`` is the operating points swept when it is omitted.
    ``saved(atom)`` is the point an omitted number stands for when that is not a sweep (a gate file's
    threshold). ``keep(pools, atom, points, inputs)`` gives the keep mask; ``score(pools, atom, inputs)``
    a per-pool score that grows with "on topic" (for ROC AUC), or None when the family has none.
    """

    name: str
    form: str
    target: bool
    value: str
    low: float
    high: float | None
    omitted: str
    keep: Callable[[PoolSet, GateAtom, np.ndarray, GateInputs], np.ndarray]
    score: Callable[[PoolSet, GateAtom, GateInputs], np.ndarray | None]
    grid: Callable[[], np.ndarray] = field(default=lambda: np.zeros(0))
    default: float | None = None
    saved: Callable[[GateAtom], float] | None = None


def all_or_nothing(score: np.ndarray, pools: PoolSet, points: np.ndarray) -> np.ndarray:
    """Keep a whole pool when its score is ≥ the point (NaN score: dropped), shaped like a keep mask."""
    t = np.asarray(points, dtype=float).reshape(-1, 1)
    with np.errstate(invalid="ignore"):
        kept = np.nan_to_num(np.asarray(score, dtype=float), nan=-np.inf)[None] >= t
    return kept[..., None] & pools.valid[None]


def top_value(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Each pool's largest valid value (NaN for an empty pool)."""
    masked = np.where(valid, values, -np.inf)
    top = masked.max(axis=1, initial=-np.inf) if masked.shape[1] else np.full(masked.shape[0], -np.inf)
    return np.where(np.isfinite(top), top, np.nan)


def _load() -> dict[str, Family]:
    families = {}
    for module in MODULES:
        family = importlib.import_module(f"{__name__}.{module}").FAMILY
        families[family.name] = family
    return families


FAMILIES: dict[str, Family] = _load()
