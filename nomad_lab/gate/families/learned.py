"""``learned:PATH`` (the gate file's own threshold) or ``learned:PATH@T`` (keep when P(on topic) >= T).

The gate file is read here; its features come from the caller's :class:`GateInputs` (gathered from a
stored run with the run's own embedder), and a file fitted on another embedder is refused.
"""

from __future__ import annotations

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate import gates
from nomad_lab.gate.families import OMIT_SAVED, Family, GateInputs, all_or_nothing
from nomad_lab.gate.learned import LearnedGate, feature_columns
from nomad_lab.gate.pools import PoolSet


def score(pools: PoolSet, atom: object, inputs: GateInputs) -> np.ndarray:
    """P(on topic) per pool from the gate file named by the spec."""
    where = f"gate {atom}"
    if inputs.features is None:
        raise NomadLabError(f"{where}: needs features from a stored run (nomad-lab gate apply --run RUN)")
    gate = LearnedGate.load(atom.target)  # type: ignore[attr-defined]
    gate.check_embedder(inputs.features.embedder, where)
    x, names = inputs.features.matrix(gate.kinds)
    return gate.score(x[:, feature_columns(names, gate.features, where)])


def keep(pools: PoolSet, atom: object, points: np.ndarray, inputs: GateInputs) -> np.ndarray:
    return all_or_nothing(score(pools, atom, inputs), pools, points)


def threshold(atom: object) -> float:
    """The spec's number, else the threshold saved in the gate file."""
    value = atom.value  # type: ignore[attr-defined]
    return float(value) if value is not None else LearnedGate.load(atom.target).threshold  # type: ignore[attr-defined]


FAMILY = Family(
    name="learned",
    form="learned:GATE_FILE[@T]",
    target=True,
    value="threshold",
    low=0.0,
    high=1.0,
    omitted=OMIT_SAVED,
    keep=keep,
    score=score,
    grid=lambda: gates.UNIT_GRID,
    saved=threshold,
)
