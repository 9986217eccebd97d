"""``verdicts`` (key: a judge spec): the judge's cached verdict and P(true) on each question's top-5 set.

Read from the store's verdict cache only: a verdict is a model call, made by ``study judges`` or
``study gates --judge-model`` (which fill the same cache); ``missing`` counts the sets still unjudged,
so a caller can say "not measured" instead of scoring a partly judged run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.services.verdict_cache import judge_passages_and_key
from nomad_lab.store import Store

KIND = "verdicts"


@dataclass(frozen=True)
class CachedVerdicts:
    """One judge's cached verdicts over a run (NaN: none cached), and how many it would still need."""

    spec: str
    verdicts: np.ndarray
    p_true: np.ndarray
    ms: np.ndarray
    missing: int


def gather(ctx: GatherContext, key: str) -> CachedVerdicts:
    n = ctx.data.pools.size
    verdicts, p_true, ms = (np.full(n, np.nan) for _ in range(3))
    missing = 0
    with Store(ctx.store_path, read_only=True) as store:
        for i, query in enumerate(ctx.data.queries):
            passages = ctx.chunks(i)
            if not passages:
                continue
            verdict = store.get_verdict(key, judge_passages_and_key(query, passages)[1])
            if verdict is None:
                missing += 1
                continue
            if verdict.ok and verdict.on_topic is not None:
                verdicts[i] = 1.0 if verdict.on_topic else 0.0
            p_true[i] = np.nan if verdict.p_true is None else verdict.p_true
            ms[i] = np.nan if verdict.ms is None else verdict.ms
    return CachedVerdicts(key, verdicts, p_true, ms, missing)
