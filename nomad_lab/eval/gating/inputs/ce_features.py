"""``ce`` (key: a cross-encoder spec, default the bundled ms-marco model): the windowed cross-encoder as
features for learned gates: the best, second-best and mean passage score of each question's top-5 set.

Why three: the best passage says whether anything answers; the second and the mean say whether the
answer is corroborated or one lucky window. An empty set scores 0 in all three, as empty pools do in the
pool statistics (the pool-size feature tells the two apart); a one-passage set's second best is its best.
The scores come through the ``pair_scores`` gatherer, so they share its cache.
"""

from __future__ import annotations

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.inputs.window_scores import window_scores
from nomad_lab.gate.features import FeatureBlock
from nomad_lab.gate.pair_model import CE_NAMES, ce_features
from nomad_lab.retrieval.cross_encoder import DEFAULT_CROSS_ENCODER, locate_cross_encoder

KIND = "ce"
NAMES = CE_NAMES


def gather(ctx: GatherContext, key: str) -> FeatureBlock:
    scores = window_scores(ctx, key or DEFAULT_CROSS_ENCODER)
    n = max(1, len(scores.passages))
    cost = (scores.pairs / n, 1000 * scores.seconds / n)
    return FeatureBlock(ce_features(scores.passages), list(NAMES), cost=cost)


def check(key: str) -> None:
    locate_cross_encoder(key or DEFAULT_CROSS_ENCODER)
