"""``pool``: the pool statistics and keyword overlap retrieval already computed (no model call)."""

from __future__ import annotations

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.gate.features import FeatureBlock

KIND = "pool"


def gather(ctx: GatherContext, key: str) -> FeatureBlock:
    return ctx.data.features.blocks["pool"]
