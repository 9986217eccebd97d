"""``sufficiency_scores`` (key: ``zero-shot`` or a sufficiency gate file): each question's best sentence
unit score over its top-5 set (NaN: empty pool), :func:`nomad_lab.retrieval.sufficiency_model.
sufficiency_scores`. The body's reading of each unit is cached beside the store (by body digest), so a
second gather runs only the head."""

from __future__ import annotations

import numpy as np

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.gate.answer_file import SufficiencyGate
from nomad_lab.retrieval.answer_cache import cache_root
from nomad_lab.retrieval.sufficiency_model import ZERO_SHOT, sufficiency_scores

KIND = "sufficiency_scores"


def gather(ctx: GatherContext, key: str) -> np.ndarray:
    where = f"sufficiency:{key} on run {ctx.data.run_id}"
    if key != ZERO_SHOT:
        SufficiencyGate.load(key).check_run(ctx.data.embedder, ctx.data.pools.fingerprint, where)
    questions = [(q, ctx.passages(i)) for i, q in enumerate(ctx.data.queries)]
    bar = None
    if ctx.progress:
        from tqdm import tqdm  # heavy

        bar = tqdm(desc=f"sufficiency {key}: new units", leave=False)
    scores = sufficiency_scores(
        key, questions, cache_root(ctx.store_path), where, None if bar is None else bar.update
    )
    if bar is not None:
        bar.close()
    return scores


def check(key: str) -> None:
    """``zero-shot``, or a sufficiency gate file whose weights are there and match (read, not run)."""
    if key != ZERO_SHOT:
        SufficiencyGate.load(key)
