"""``judge:SPEC`` (the verdict, all or nothing) and ``judge:SPEC@TAU`` (keep when P(true) >= TAU).

The verdicts and P(true) come from the caller (read from the store's verdict cache); a pool without a
verdict is kept, as the pipeline fails open.
"""

from __future__ import annotations

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate import gates
from nomad_lab.gate.families import OMIT_VERDICT, Family, GateInputs, all_or_nothing
from nomad_lab.gate.pools import PoolSet


def _need(table: dict | object, atom: object, what: str) -> np.ndarray:
    spec = atom.target  # type: ignore[attr-defined]
    if spec not in table:  # type: ignore[operator]
        raise NomadLabError(f"gate {atom}: no {what} gathered for judge {spec!r}")
    return table[spec]  # type: ignore[index]


def keep(pools: PoolSet, atom: object, points: np.ndarray, inputs: GateInputs) -> np.ndarray:
    if atom.value is None:  # type: ignore[attr-defined]
        mask = gates.judge(pools, _need(inputs.verdicts, atom, "verdicts"))
        return np.broadcast_to(mask, (len(points), *mask.shape[1:]))
    p_true = _need(inputs.p_true, atom, "P(true)")
    unjudged = np.isnan(p_true)
    return all_or_nothing(np.where(unjudged, np.inf, p_true), pools, points)


def score(pools: PoolSet, atom: object, inputs: GateInputs) -> np.ndarray | None:
    return inputs.p_true.get(atom.target)  # type: ignore[attr-defined]


FAMILY = Family(
    name="judge",
    form="judge:BACKEND_SPEC[@TAU]",
    target=True,
    value="tau",
    low=0.0,
    high=1.0,
    omitted=OMIT_VERDICT,
    keep=keep,
    score=score,
    grid=lambda: gates.UNIT_GRID,
)
