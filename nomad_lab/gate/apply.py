"""A parsed gate spec applied to pools: its operating points, its keep mask and its operating curve.

One function turns any spec (a single gate, a sweep, an AND of gates) into what ``gate.sweep`` scores,
so the sweep command, the notebooks and ``study gates`` evaluate a spec string the same way.
"""

from __future__ import annotations

import numpy as np

from nomad_lab.gate import gates
from nomad_lab.gate.families import OMIT_SWEEP, GateInputs
from nomad_lab.gate.pools import PoolSet
from nomad_lab.gate.spec import GateAtom, GateSpec, parse_gate_spec
from nomad_lab.gate.sweep import OperatingCurve, curve_from_mask, curve_from_scores


def points_for(atom: GateAtom) -> np.ndarray:
    """The operating points of one part: its number, its grid (omitted: sweep), or its saved point."""
    family = atom.kind
    if atom.value is not None:
        return np.array([atom.value])
    if family.omitted == OMIT_SWEEP:
        return np.asarray(family.grid(), dtype=float)
    if family.saved is not None:
        return np.array([family.saved(atom)])
    return np.array([np.nan])  # a point-free gate (the judge's verdict)


def spec_mask(
    pools: PoolSet, spec: GateSpec | str, inputs: GateInputs | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(points, keep mask points × pools × width): the swept part's points, the others fixed (AND)."""
    spec = parse_gate_spec(spec) if isinstance(spec, str) else spec
    inputs = inputs or GateInputs()
    swept = spec.sweeping
    points = points_for(swept) if swept is not None else points_for(spec.atoms[0])
    mask = None
    for atom in spec.atoms:
        own = points_for(atom)
        part = atom.kind.keep(pools, atom, own, inputs)
        part = (
            part
            if atom is swept or part.shape[0] == len(points)
            else np.broadcast_to(part[:1], (len(points), *part.shape[1:]))
        )
        mask = part if mask is None else gates.both(mask, part)
    return points, mask  # type: ignore[return-value]


def spec_curve(
    pools: PoolSet, spec: GateSpec | str, inputs: GateInputs | None = None, k: int = gates.DEFAULT_K
) -> OperatingCurve:
    """The operating curve of a spec (one point unless a number is omitted), named by its canonical text."""
    spec = parse_gate_spec(spec) if isinstance(spec, str) else spec
    if len(spec.atoms) == 1 and spec.atoms[0].family == "floor":  # prefix lengths: the fast path
        points = points_for(spec.atoms[0])
        return curve_from_scores(pools, *gates.evaluate_score_floors(pools, points, k), points, str(spec), k)
    points, mask = spec_mask(pools, spec, inputs)
    return curve_from_mask(pools, mask, points, str(spec), k)
