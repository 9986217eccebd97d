"""``rerank_scores`` (key: a trained reranker spec, e.g. nanoranker): its best score over each
question's top-5 set (NaN: empty pool), with the pairs scored and the seconds it took on this CPU."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.retrieval.trained_reranker import RERANKER_SPECS, RerankerError, load_reranker

KIND = "rerank_scores"


@dataclass(frozen=True)
class PairScores:
    """Each question's best (question, passage) score, and what scoring cost."""

    best: np.ndarray
    pairs: int
    seconds: float


def gather(ctx: GatherContext, key: str) -> PairScores:
    reranker = load_reranker(key)
    best = np.full(ctx.data.pools.size, np.nan)
    pairs = 0
    started = time.perf_counter()
    for i, query in ctx.track(enumerate(ctx.data.queries), f"rerank {key}", ctx.data.pools.size):
        texts = ctx.passages(i)
        if texts:
            best[i] = max(reranker.score(query, texts))
            pairs += len(texts)
    return PairScores(best, pairs, time.perf_counter() - started)


def check(key: str) -> None:
    """The reranker spec is one this version knows (nothing loaded)."""
    if key.strip() not in RERANKER_SPECS:
        raise RerankerError(f"unknown reranker spec {key!r} (accepted: {', '.join(RERANKER_SPECS)})")
