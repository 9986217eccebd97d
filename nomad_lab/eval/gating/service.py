"""The gating service: any gate spec the parser accepts, evaluated on a stored run, in every door.

``gather`` reads the run and supplies what each part of the spec declares it needs (one gatherer per
input kind, :mod:`nomad_lab.eval.gating.inputs`, computing and caching what the store lacks); ``mask``,
``curve`` and ``scores`` evaluate the spec over it with the pure gate math (:mod:`nomad_lab.gate.apply`).
``study floor-sweep --gate``, ``sweep --dump --gate``, ``study gates``, ``gate apply`` and the notebooks all
come through here, so a new family is one module and every door evaluates it.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import numpy as np

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.inputs import gather_needs
from nomad_lab.eval.gating.run_data import RunData, load_run
from nomad_lab.gate import masks
from nomad_lab.gate.apply import spec_curve, spec_mask, spec_needs, spec_score
from nomad_lab.gate.families import GateInputs
from nomad_lab.gate.operating_curves import OperatingCurve
from nomad_lab.gate.spec import GateSpec, parse_gate_spec

Spec = GateSpec | str
Run = RunData | str | None


def _spec(spec: Spec) -> GateSpec:
    return parse_gate_spec(spec) if isinstance(spec, str) else spec


def _run(store_path: str | Path, run: Run) -> RunData:
    return run if isinstance(run, RunData) else load_run(store_path, run)


def gather(
    store_path: str | Path,
    run: Run,
    spec: Spec,
    *,
    progress: bool = False,
    judge: Collection[str] = (),
) -> tuple[RunData, GateInputs]:
    """The run (a stored run id, None for the latest, or an already loaded :class:`RunData`) and the
    inputs every part of ``spec`` needs; the verdicts of the judge specs in ``judge`` are computed where
    the cache lacks them (model calls), any other judge's are read from the cache."""
    data = _run(store_path, run)
    parsed = _spec(spec)
    needs = spec_needs(parsed)
    data.refuse_lacking([*(a.family for a in parsed.atoms), *(n.kind for n in needs)], f"gate {parsed}")
    ctx = GatherContext(Path(store_path), data, progress, judge=frozenset(judge))
    return data, gather_needs(ctx, needs)


def mask(store_path: str | Path, run: Run, spec: Spec) -> tuple[np.ndarray, np.ndarray]:
    """(operating points, keep mask points × pools × width) of ``spec`` on the run."""
    data, inputs = gather(store_path, run, spec)
    return spec_mask(data.pools, _spec(spec), inputs)


def curve(store_path: str | Path, run: Run, spec: Spec, k: int = masks.DEFAULT_K) -> OperatingCurve:
    """The operating curve (leak and recall@k at each point, with intervals) of ``spec`` on the run."""
    data, inputs = gather(store_path, run, spec)
    return spec_curve(data.pools, _spec(spec), inputs, k)


def scores(store_path: str | Path, run: Run, spec: Spec) -> np.ndarray | None:
    """Each question's score under a single-part ``spec`` (grows with "on topic"), None for a composition."""
    data, inputs = gather(store_path, run, spec)
    return spec_score(data.pools, _spec(spec), inputs)
