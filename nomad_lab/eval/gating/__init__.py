"""Gating as a service: a stored run and a gate spec in, masks, curves and scores out (see ``service``)."""

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.run_data import RunData, load_run, subset_run
from nomad_lab.eval.gating.service import curve, gather, mask, scores

__all__ = ["GatherContext", "RunData", "curve", "gather", "load_run", "mask", "scores", "subset_run"]
