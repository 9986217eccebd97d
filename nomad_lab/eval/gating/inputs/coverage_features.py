"""``coverage``: lexical coverage features (:mod:`nomad_lab.gate.coverage`) from the run's own index
(document frequencies over its chunks) and each question's top-5 set; no label, no model call."""

from __future__ import annotations

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.gate.coverage import NAMES, Vocabulary, coverage_matrix
from nomad_lab.gate.features import FeatureBlock

KIND = "coverage"


def gather(ctx: GatherContext, key: str) -> FeatureBlock:
    vocabulary = Vocabulary.of(ctx.chunk_texts())
    passages = [ctx.passages(i) for i in range(ctx.data.pools.size)]
    return FeatureBlock(coverage_matrix(ctx.data.queries, passages, vocabulary), list(NAMES))
