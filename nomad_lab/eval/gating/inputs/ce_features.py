"""``ce`` (key: a cross-encoder spec, default the bundled ms-marco model): the windowed cross-encoder as
features for learned gates: the best, second-best and mean passage score of each question's top-5 set.

Why three: the best passage says whether anything answers; the second and the mean say whether the
answer is corroborated or one lucky window. An empty set scores 0 in all three, as empty pools do in the
pool statistics (the pool-size feature tells the two apart); a one-passage set's second best is its best.
The scores come through the ``pair_scores`` gatherer, so they share its cache.
"""

from __future__ import annotations

import numpy as np

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.inputs.window_scores import window_scores
from nomad_lab.gate.features import FeatureBlock
from nomad_lab.retrieval.cross_encoder import DEFAULT_CROSS_ENCODER, locate_cross_encoder

KIND = "ce"
NAMES = ["ce_best", "ce_second", "ce_mean"]


def features(passages: np.ndarray) -> np.ndarray:
    """``(n, 3)``: best, second best and mean of each row's non-NaN scores (0 for an all-NaN row)."""
    valid = ~np.isnan(passages)
    count = valid.sum(axis=1)
    ordered = -np.sort(-np.where(valid, passages, -np.inf), axis=1)
    best = np.where(count > 0, ordered[:, 0], 0.0)
    second = np.where(count > 1, ordered[:, min(1, ordered.shape[1] - 1)], best)
    mean = np.where(count > 0, np.where(valid, passages, 0.0).sum(axis=1) / np.maximum(count, 1), 0.0)
    return np.column_stack([best, second, mean])


def gather(ctx: GatherContext, key: str) -> FeatureBlock:
    scores = window_scores(ctx, key or DEFAULT_CROSS_ENCODER)
    n = max(1, len(scores.passages))
    cost = (scores.pairs / n, 1000 * scores.seconds / n)
    return FeatureBlock(features(scores.passages), list(NAMES), cost=cost)


def check(key: str) -> None:
    locate_cross_encoder(key or DEFAULT_CROSS_ENCODER)
