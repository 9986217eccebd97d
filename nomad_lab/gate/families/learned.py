"""``learned:PATH`` (the gate file's own threshold) or ``learned:PATH@T`` (keep when P(on topic) >= T).

The gate file is read here and names the feature kinds it was fitted on; the part needs exactly those
(``Need(kind)`` each: feature blocks the gating service gathers from a stored run with the run's own
embedder), and a file fitted on another embedder is refused.
"""

from __future__ import annotations

import numpy as np

from nomad_lab.gate import masks
from nomad_lab.gate.families import Family, GateInputs, Need, all_or_nothing, saved_threshold
from nomad_lab.gate.features import FeatureTable
from nomad_lab.gate.logistic_gate import LearnedGate
from nomad_lab.gate.pools import PoolSet


def needs(atom: object) -> tuple[Need, ...]:
    return tuple(Need(kind) for kind in LearnedGate.load(atom.target).kinds)  # type: ignore[attr-defined]


def score(pools: PoolSet, atom: object, inputs: GateInputs) -> np.ndarray:
    """P(on topic) per pool from the gate file named by the spec."""
    gate = LearnedGate.load(atom.target)  # type: ignore[attr-defined]
    table = FeatureTable.of({need.kind: inputs[need] for need in needs(atom)})
    return gate.score_table(table, f"gate {atom}")


def keep(pools: PoolSet, atom: object, points: np.ndarray, inputs: GateInputs) -> np.ndarray:
    return all_or_nothing(score(pools, atom, inputs), pools, points)


FAMILY = Family(
    name="learned",
    order=50,
    form="learned:GATE_FILE[@T]",
    value="threshold",
    low=0.0,
    high=1.0,
    keep=keep,
    score=score,
    grid=lambda: masks.UNIT_GRID,
    saved=saved_threshold(LearnedGate.load),
    needs=needs,
)
