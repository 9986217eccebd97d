"""A parsed gate spec applied to pools: its operating points, its keep mask and its operating curve.

One function turns any spec (a single gate, a sweep, an AND of gates) into what ``gate.operating_curves``
scores,
so the sweep command, the notebooks and ``study gates`` evaluate a spec string the same way.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from nomad_lab.gate import masks
from nomad_lab.gate.families import OMIT_SWEEP, GateInputs, Need, score_grid
from nomad_lab.gate.operating_curves import OperatingCurve, curve_from_mask, curve_from_scores
from nomad_lab.gate.pools import PoolSet
from nomad_lab.gate.spec import GateAtom, GateSpec, parse_gate_spec


def points_for(atom: GateAtom, pools: PoolSet, inputs: GateInputs) -> np.ndarray:
    """The operating points of one part: its number, its grid (omitted: sweep; an empty grid sweeps the
    quantiles of the part's own score), or its saved point."""
    family = atom.kind
    if atom.value is not None:
        return np.array([atom.value])
    if family.omitted == OMIT_SWEEP:
        grid = np.asarray(family.grid(), dtype=float)
        return grid if grid.size else score_grid(family.score(pools, atom, inputs))
    if family.saved is not None:
        return np.array([family.saved(atom)])
    return np.array([np.nan])  # a point-free gate (the judge's verdict)


def spec_mask(
    pools: PoolSet, spec: GateSpec | str, inputs: GateInputs | None = None, *, sweep: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(points, keep mask points × pools × width): the swept part's points, the others fixed (AND).

    ``sweep``: when no part omits a sweeping number, sweep the first part's grid anyway (a judge's
    P(true) instead of its verdict, a gate file's threshold instead of its saved one): a leaderboard
    compares every gate over its whole operating range.
    """
    spec = parse_gate_spec(spec) if isinstance(spec, str) else spec
    inputs = inputs or GateInputs()
    swept = spec.sweeping
    if sweep and swept is None:
        first = spec.atoms[0]
        grid = np.asarray(first.kind.grid(), dtype=float)
        grid = grid if grid.size else score_grid(first.kind.score(pools, first, inputs))
        swept = replace(first, value=float(grid[0]) if grid.size else 0.0)
        spec = GateSpec((swept, *spec.atoms[1:]))
        points = grid
    else:
        points = points_for(swept or spec.atoms[0], pools, inputs)
    mask = None
    for atom in spec.atoms:
        own = points if atom is (swept or spec.atoms[0]) else points_for(atom, pools, inputs)
        part = atom.kind.keep(pools, atom, own, inputs)
        part = (
            part
            if atom is swept or part.shape[0] == len(points)
            else np.broadcast_to(part[:1], (len(points), *part.shape[1:]))
        )
        mask = part if mask is None else masks.both(mask, part)
    return points, mask  # type: ignore[return-value]


def spec_curve(
    pools: PoolSet,
    spec: GateSpec | str,
    inputs: GateInputs | None = None,
    k: int = masks.DEFAULT_K,
    points: np.ndarray | list[float] | None = None,
) -> OperatingCurve:
    """The operating curve of a spec (one point unless a number is omitted), named by its canonical text.

    ``points`` sweeps a lone ``floor`` over chosen floors instead of its grid (a study reporting a few)."""
    spec = parse_gate_spec(spec) if isinstance(spec, str) else spec
    if points is not None and [str(a) for a in spec.atoms] != ["floor"]:
        raise ValueError(f"{spec}: chosen points sweep a lone 'floor' only")
    if len(spec.atoms) == 1 and spec.atoms[0].family == "floor":  # prefix lengths: the fast path
        points = np.asarray(points_for(spec.atoms[0], pools, GateInputs()) if points is None else points)
        return curve_from_scores(pools, *masks.evaluate_score_floors(pools, points, k), points, str(spec), k)
    points, mask = spec_mask(pools, spec, inputs)
    return curve_from_mask(pools, mask, points, str(spec), k)


def spec_needs(spec: GateSpec | str) -> tuple[Need, ...]:
    """Every input the spec's parts need beyond the pools, each once, in part order."""
    spec = parse_gate_spec(spec) if isinstance(spec, str) else spec
    return tuple(dict.fromkeys(need for atom in spec.atoms for need in atom.kind.needs(atom)))


def spec_score(pools: PoolSet, spec: GateSpec | str, inputs: GateInputs | None = None) -> np.ndarray | None:
    """The per-pool score of a single-part spec (grows with "on topic"; for ROC AUC), else None."""
    spec = parse_gate_spec(spec) if isinstance(spec, str) else spec
    if len(spec.atoms) != 1:
        return None
    atom = spec.atoms[0]
    return atom.kind.score(pools, atom, inputs or GateInputs())
