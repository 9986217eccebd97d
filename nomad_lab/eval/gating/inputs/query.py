"""``query``: each question's embedding by the run's own recorded embedder (cached in the store)."""

from __future__ import annotations

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.run_data import query_vectors
from nomad_lab.gate.features import FeatureBlock
from nomad_lab.store import Store

KIND = "query"


def gather(ctx: GatherContext, key: str) -> FeatureBlock:
    block = ctx.data.features.blocks.get("query")
    if block is not None:
        return block
    identity = ctx.data.embedder
    with Store(ctx.store_path) as store:
        vectors = query_vectors(store, identity, ctx.data.queries, f"run {ctx.data.run_id}")
    return FeatureBlock(vectors, [f"query_{i}" for i in range(vectors.shape[1])], identity)
