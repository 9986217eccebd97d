"""``pool_scores`` (key: a score column's name): an imported pool file's named score of every candidate,
shaped like the run's pools (NaN padding), for ``score:NAME`` gates. Every run also has the two columns
of the pool itself, ``score`` (the final score) and ``semanticScore`` (the raw cosine)."""

from __future__ import annotations

import numpy as np

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.store import Store

KIND = "pool_scores"


def gather(ctx: GatherContext, key: str) -> np.ndarray:
    if key == "score":
        return ctx.data.pools.score
    if key == "semanticScore":
        ctx.data.refuse_lacking(["cosine"], "score:semanticScore")
        return ctx.data.pools.semantic
    with Store(ctx.store_path, read_only=True) as store:
        column = store.get_pool_scores(ctx.data.run_id, key)
    pools = ctx.data.pools
    out = np.full(pools.score.shape, np.nan)
    for i, golden_id in enumerate(pools.ids):
        for rank, value in column.get(golden_id, {}).items():
            out[i, rank - 1] = value
    return out
