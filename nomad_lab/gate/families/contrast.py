"""``contrast@D``: keep a pool only if its top score beats its median by at least D (all or nothing)."""

from __future__ import annotations

import warnings

import numpy as np

from nomad_lab.gate import masks
from nomad_lab.gate.families import Family, top_value
from nomad_lab.gate.pools import PoolSet

CONTRAST_GRID = np.round(np.linspace(0.0, 0.3, 61), 3)


def gap(pools: PoolSet) -> np.ndarray:
    """Top score minus the pool's median score (NaN for an empty pool)."""
    with warnings.catch_warnings():  # an empty pool has no median
        warnings.simplefilter("ignore", RuntimeWarning)
        median = np.nanmedian(pools.score, axis=1) if pools.score.shape[1] else np.full(pools.size, np.nan)
    return top_value(pools.score, pools.valid) - median


FAMILY = Family(
    name="contrast",
    order=30,
    form="contrast[@D]",
    value="delta",
    low=0.0,
    keep=lambda pools, atom, points, inputs: masks.contrast(pools, points),
    score=lambda pools, atom, inputs: gap(pools),
    grid=lambda: CONTRAST_GRID,
)
