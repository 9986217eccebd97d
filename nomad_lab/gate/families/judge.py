"""``judge:SPEC`` (the verdict, all or nothing) and ``judge:SPEC@TAU`` (keep when P(true) >= TAU).

Needs the judge's verdicts on each question's top-5 set (``Need("verdicts", SPEC)``: an object with
``verdicts`` and ``p_true`` arrays, NaN where the set was not judged), read by the gating service from
the store's verdict cache; a pool without a verdict is kept, as the pipeline fails open.
"""

from __future__ import annotations

import numpy as np

from nomad_lab.gate import masks
from nomad_lab.gate.families import OMIT_VERDICT, Family, GateInputs, Need, all_or_nothing
from nomad_lab.gate.pools import PoolSet


def needs(atom: object) -> tuple[Need, ...]:
    return (Need("verdicts", atom.target),)  # type: ignore[attr-defined]


def keep(pools: PoolSet, atom: object, points: np.ndarray, inputs: GateInputs) -> np.ndarray:
    judged = inputs[needs(atom)[0]]
    if atom.value is None:  # type: ignore[attr-defined]
        mask = masks.judge(pools, judged.verdicts)
        return np.broadcast_to(mask, (len(points), *mask.shape[1:]))
    unjudged = np.isnan(judged.p_true)
    return all_or_nothing(np.where(unjudged, np.inf, judged.p_true), pools, points)


def score(pools: PoolSet, atom: object, inputs: GateInputs) -> np.ndarray | None:
    return inputs[needs(atom)[0]].p_true


FAMILY = Family(
    name="judge",
    order=40,
    form="judge:BACKEND_SPEC[@TAU]",
    value="tau",
    low=0.0,
    high=1.0,
    omitted=OMIT_VERDICT,
    keep=keep,
    score=score,
    grid=lambda: masks.UNIT_GRID,
    needs=needs,
)
