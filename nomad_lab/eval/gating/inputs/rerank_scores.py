"""``rerank_scores`` (key: a trained reranker spec, e.g. nanoranker): its best score over each
question's top-5 set (NaN: empty pool), with the pairs scored and the seconds it took on this CPU.

The reranker scores each (question, passage) pair on its own (an MLP over the two embeddings), so its
scores share the cross-encoder's pair-score cache, keyed by the reranker's identity: a rerun of a
leaderboard reads them back instead of scoring 500 pools again, a question is stored as soon as it is
scored (an interrupted gather resumes), and each pair keeps its share of its question's scoring time,
so the cost reported is the model's on this CPU even when every score came from the cache.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.retrieval.trained_reranker import RERANKER_SPECS, RerankerError, load_reranker
from nomad_lab.store import Store, pair_sha256

KIND = "rerank_scores"


@dataclass(frozen=True)
class PairScores:
    """Each question's best (question, passage) score, and what scoring cost."""

    best: np.ndarray
    pairs: int
    seconds: float


def gather(ctx: GatherContext, key: str) -> PairScores:
    reranker = load_reranker(key)
    plan = [
        [(pair_sha256(query, text), text) for text in ctx.passages(i)]
        for i, query in enumerate(ctx.data.queries)
    ]
    with Store(ctx.store_path, read_only=True) as store:
        cached = store.get_pair_scores(reranker.identity, (h for pairs in plan for h, _ in pairs))
    todo = [i for i, pairs in enumerate(plan) if any(h not in cached for h, _ in pairs)]
    if todo:
        with Store(ctx.store_path) as store:
            for i in ctx.track(todo, f"rerank {key}", len(todo)):
                missing = {h: text for h, text in plan[i] if h not in cached}
                if not missing:  # scored with an earlier question of the same text
                    continue
                started = time.perf_counter()
                scores = reranker.score(ctx.data.queries[i], list(missing.values()))
                each = 1000 * (time.perf_counter() - started) / len(missing)
                rows = [(h, score, each) for h, score in zip(missing, scores, strict=True)]
                store.put_pair_scores(reranker.identity, rows)
                cached.update({h: (score, ms) for h, score, ms in rows})
    best = np.full(ctx.data.pools.size, np.nan)
    milliseconds = 0.0
    for i, pairs in enumerate(plan):
        if pairs:
            best[i] = max(cached[h][0] for h, _ in pairs)
            milliseconds += sum(cached[h][1] or 0.0 for h, _ in pairs)
    return PairScores(best, sum(len(pairs) for pairs in plan), milliseconds / 1000)


def check(key: str) -> None:
    """The reranker spec is one this version knows (nothing loaded)."""
    if key.strip() not in RERANKER_SPECS:
        raise RerankerError(f"unknown reranker spec {key!r} (accepted: {', '.join(RERANKER_SPECS)})")
