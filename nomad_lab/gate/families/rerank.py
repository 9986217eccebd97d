"""``rerank:SPEC[@S]``: a trained reranker's best score over the top-5 set, all or nothing on the pool.

Needs ``Need("rerank_scores", SPEC)`` (gathered by running the reranker over the stored sets); an
omitted number sweeps the score's own quantiles, since each reranker has its own scale.
"""

from __future__ import annotations

import math

import numpy as np

from nomad_lab.gate.families import OMIT_SWEEP, Family, GateInputs, Need, all_or_nothing
from nomad_lab.gate.pools import PoolSet


def needs(atom: object) -> tuple[Need, ...]:
    return (Need("rerank_scores", atom.target),)  # type: ignore[attr-defined]


def score(pools: PoolSet, atom: object, inputs: GateInputs) -> np.ndarray:
    return inputs[needs(atom)[0]].best


FAMILY = Family(
    name="rerank",
    order=60,
    form="rerank:RERANKER_SPEC[@S]",
    target=True,
    value="score",
    low=-math.inf,
    high=None,
    omitted=OMIT_SWEEP,
    keep=lambda pools, atom, points, inputs: all_or_nothing(score(pools, atom, inputs), pools, points),
    score=score,
    needs=needs,
)
