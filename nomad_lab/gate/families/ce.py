"""``ce:SCORER_SPEC[@LOGIT]``: a cross-encoder's best windowed logit over the top-5 set, all or nothing.

The scorer reads question and passage together (:mod:`nomad_lab.retrieval.cross_encoder`; the default
``ms-marco-minilm-l12`` installs offline). Needs ``Need("pair_scores", SCORER_SPEC)``, gathered by
scoring each passage's windows (cached in the store). A logit is unbounded and its scale is the model's
own, so an omitted number sweeps the score's own quantiles. An empty pool has no score and keeps nothing.
"""

from __future__ import annotations

import math

import numpy as np

from nomad_lab.gate.families import OMIT_SWEEP, Family, GateInputs, Need, all_or_nothing
from nomad_lab.gate.pools import PoolSet


def needs(atom: object) -> tuple[Need, ...]:
    return (Need("pair_scores", atom.target),)  # type: ignore[attr-defined]


def score(pools: PoolSet, atom: object, inputs: GateInputs) -> np.ndarray:
    return np.asarray(inputs[needs(atom)[0]].best, dtype=float)


FAMILY = Family(
    name="ce",
    order=70,
    form="ce:SCORER_SPEC[@LOGIT]",
    target=True,
    value="logit",
    low=-math.inf,
    high=None,
    omitted=OMIT_SWEEP,
    keep=lambda pools, atom, points, inputs: all_or_nothing(score(pools, atom, inputs), pools, points),
    score=score,
    needs=needs,
)
