"""``scores``: every named score column of an imported pool file as learned-gate features, each as its
sorted top values over the pool (``score_NAME_1`` ... ``_5``, 0 where a pool has fewer), computed like
the pool statistics' sorted final scores. A run without named columns has none to offer."""

from __future__ import annotations

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.reference import RAG_DEFAULT_TOP_K
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.inputs import pool_scores
from nomad_lab.gate.features import FeatureBlock, score_features

KIND = "scores"


def gather(ctx: GatherContext, key: str) -> FeatureBlock:
    names = ctx.data.score_columns
    if not names:
        raise NomadLabError(
            f"run {ctx.data.run_id}: no named score columns (import a pool file that has scores)"
        )
    columns = {name: pool_scores.gather(ctx, name) for name in names}
    matrix, labels = score_features(columns, ctx.data.pools.valid, RAG_DEFAULT_TOP_K)
    return FeatureBlock(matrix, labels, ctx.data.embedder or None)
