"""``score:NAME[@T]``: a floor on a named score column of an imported pool file (a stack's own reranker,
BM25 or hybrid score): keep the candidates whose NAME is >= T; ``score:NAME`` sweeps T over the column's
own quantiles, since a stack's score has its own scale. A pool's score (for ROC AUC) is its best NAME.
``score:score`` and ``score:semanticScore`` name every run's final and raw cosine scores.

Needs ``Need("pool_scores", NAME)``: the column as an array shaped like the pools (NaN padding), read
from the store's ``pool_scores`` table; a run without that column is one error line listing its columns.
"""

from __future__ import annotations

import math

import numpy as np

from nomad_lab.gate.families import Family, GateInputs, Need, top_value
from nomad_lab.gate.pools import PoolSet


def needs(atom: object) -> tuple[Need, ...]:
    return (Need("pool_scores", atom.target),)  # type: ignore[attr-defined]


def values(pools: PoolSet, atom: object, inputs: GateInputs) -> np.ndarray:
    return np.asarray(inputs[needs(atom)[0]], dtype=float)


def keep(pools: PoolSet, atom: object, points: np.ndarray, inputs: GateInputs) -> np.ndarray:
    t = np.asarray(points, dtype=float).reshape(-1, 1, 1)
    with np.errstate(invalid="ignore"):
        return pools.valid[None] & (values(pools, atom, inputs)[None] >= t)


FAMILY = Family(
    name="score",
    order=60,
    form="score:NAME[@T]",
    value="threshold",
    low=-math.inf,
    keep=keep,
    score=lambda pools, atom, inputs: top_value(values(pools, atom, inputs), pools.valid),
    needs=needs,
)
