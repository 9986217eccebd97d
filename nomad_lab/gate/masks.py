"""Retrieval gates as array transforms over stored pools, and their scoring at every operating point.

A gate decides which of a pool's candidates may reach the prompt. Each gate here returns a boolean
keep mask shaped ``(points, pools, width)``: one row of masks per operating point (a floor, a contrast
threshold), so a sweep of 101 floors over every pool is a handful of array operations, never a loop
that re-runs retrieval. ``evaluate`` then applies the reference's source diversity to what was kept,
takes the top k, and scores recall@k (answerable pools) and non-emptiness (refusal pools: a leak).

Gates: the score floor (``RAG_MIN_FINAL_SCORE``), the two alternatives the seed measured and rejected
(a cosine floor on the raw semantic score, and a top-versus-median contrast test), and the relevance
judge (one verdict per pool read from the store; a failed verdict keeps the pool unjudged). Gates
compose by ``both``: floor then judge is ``both(score_floor(...), judge(...))``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from nomad_lab.core.reference import DIVERSITY_PENALTY
from nomad_lab.core.reference import RAG_DEFAULT_TOP_K as DEFAULT_K
from nomad_lab.gate.pools import PoolSet

UNIT_GRID = np.round(np.linspace(0.0, 1.0, 101), 2)
"""0.00 ... 1.00 by 0.01: the operating points of every gate whose number lies in [0, 1]."""
FLOOR_GRID = UNIT_GRID


def score_floor(pools: PoolSet, floors: Sequence[float] | np.ndarray) -> np.ndarray:
    """Keep candidates whose final (reranked) score is ≥ the floor; a floor ≤ 0 keeps everything."""
    return _floor(pools.score, pools.valid, floors)


def cosine_floor(pools: PoolSet, floors: Sequence[float] | np.ndarray) -> np.ndarray:
    """Keep candidates whose raw cosine (semantic score) is ≥ the floor."""
    return _floor(pools.semantic, pools.valid, floors)


def _floor(values: np.ndarray, valid: np.ndarray, floors: Sequence[float] | np.ndarray) -> np.ndarray:
    f = np.asarray(floors, dtype=float).reshape(-1, 1, 1)
    off = ~(f > 0)  # the seed: a floor <= 0 (or NaN) drops nothing
    with np.errstate(invalid="ignore"):
        return valid[None] & ((values[None] >= f) | off)


def contrast(pools: PoolSet, deltas: Sequence[float] | np.ndarray) -> np.ndarray:
    """All or nothing per pool: keep the pool only if its top score beats its median by ≥ delta."""
    top = np.nanmax(np.where(pools.valid, pools.score, -np.inf), axis=1, initial=-np.inf)
    with warnings.catch_warnings():  # an empty pool has no median: it is simply not kept
        warnings.simplefilter("ignore", RuntimeWarning)
        median = np.nanmedian(pools.score, axis=1) if pools.score.shape[1] else np.full(pools.size, np.nan)
    gap = np.nan_to_num(top - median, nan=-np.inf)
    d = np.asarray(deltas, dtype=float).reshape(-1, 1)
    return (gap[None] >= d)[..., None] & pools.valid[None]


def judge(pools: PoolSet, verdicts: Sequence[float | bool | None] | np.ndarray) -> np.ndarray:
    """The relevance judge: a False verdict drops the whole pool; True or unjudged (None/NaN) keeps it."""
    v = np.array([np.nan if x is None else float(x) for x in verdicts], dtype=float)
    if v.shape != (pools.size,):
        raise ValueError(f"judge: expected {pools.size} verdicts, got {v.shape[0]}")
    return (v != 0.0)[None, :, None] & pools.valid[None]


def both(*masks: np.ndarray) -> np.ndarray:
    """Compose gates: a candidate survives only if every gate keeps it (broadcast over points)."""
    out = masks[0]
    for mask in masks[1:]:
        out = out & mask
    return out


def evaluate(pools: PoolSet, keep: np.ndarray, k: int = DEFAULT_K) -> tuple[np.ndarray, np.ndarray]:
    """Per point and pool: recall@k (NaN where a pool has no relevant docs) and whether anything was kept.

    Diversity follows SPEC §2.4 on the kept candidates: the c-th earlier kept candidate of the same
    document multiplies the score by 0.85**c, then a stable re-sort; unresolved candidates share the
    key "unknown". Processed in slices so memory stays bounded on large pool sets.
    """
    points, n, width = keep.shape
    recall = np.full((points, n), np.nan)
    nonempty = keep.any(axis=2)
    if width == 0 or n == 0:
        return recall, nonempty
    same = pools.doc[:, :, None] == pools.doc[:, None, :]
    earlier = np.tril(np.ones((width, width), dtype=bool), k=-1)
    same_earlier = same & earlier[None]
    score = np.nan_to_num(pools.score, nan=0.0)
    answerable = pools.n_relevant > 0
    step = max(1, 2_000_000 // max(1, n * width * width))
    for lo in range(0, points, step):
        kp = keep[lo : lo + step]
        repeats = (same_earlier[None] & kp[:, :, None, :]).sum(axis=3)
        diversified = np.where(kp, score[None] * DIVERSITY_PENALTY**repeats, -np.inf)
        order = np.argsort(-diversified, axis=2, kind="stable")[:, :, :k]
        taken = np.take_along_axis(kp, order, axis=2)
        hit = taken & np.take_along_axis(np.broadcast_to(pools.relevant, kp.shape), order, axis=2)
        docs = np.where(hit, np.take_along_axis(np.broadcast_to(pools.doc, kp.shape), order, axis=2), -1)
        docs = np.sort(docs, axis=2)
        distinct = (docs >= 0) & np.concatenate(
            [np.ones((*docs.shape[:2], 1), dtype=bool), docs[:, :, 1:] != docs[:, :, :-1]], axis=2
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            r = distinct.sum(axis=2) / pools.n_relevant[None]
        recall[lo : lo + step] = np.where(answerable[None], r, np.nan)
    return recall, nonempty


def evaluate_score_floors(
    pools: PoolSet, floors: Sequence[float] | np.ndarray, k: int = DEFAULT_K
) -> tuple[np.ndarray, np.ndarray]:
    """``evaluate(pools, score_floor(pools, floors))``, computed through prefix lengths.

    Pools are stored in reranked (descending score) order, so any score floor keeps a prefix of each
    pool: the metrics depend only on the prefix length, of which there are width + 1. Scoring those
    once and looking each floor up is what makes a 101-floor sweep cost about as much as 16 floors.
    """
    width = pools.score.shape[1]
    prefixes = np.arange(width + 1)[:, None, None] > np.arange(width)[None, None, :]
    by_length_recall, by_length_nonempty = evaluate(pools, prefixes & pools.valid[None], k)
    lengths = score_floor(pools, floors).sum(axis=2)  # points × pools
    columns = np.arange(pools.size)[None, :]
    return by_length_recall[lengths, columns], by_length_nonempty[lengths, columns]


def weakest_correct_top_hit(pools: PoolSet) -> float | None:
    """The lowest top-1 score among answerable pools whose top candidate is relevant (no gate applied).

    The seed's argument: when an off-topic question's top hit outscores this, no floor separates them.
    """
    has_top = pools.valid[:, 0] if pools.score.shape[1] else np.zeros(pools.size, dtype=bool)
    mask = has_top & (pools.n_relevant > 0)
    if pools.score.shape[1]:
        mask &= pools.relevant[:, 0]
    return float(pools.score[mask, 0].min()) if mask.any() else None
