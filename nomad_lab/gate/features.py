"""Per-question gate features from what retrieval already computed: no model call, no I/O.

Why these: a stored pool holds every candidate's final and semantic score, so the statistics a query
performance predictor reads (the sorted top-k scores, the top-two gap, mean and spread, an NQC-like
spread over |mean|, a WIG-like top-k mean over the pool mean, how many pass the floor) are free; the
literature finds a linear model over the sorted scores beats any single one of them. Keyword overlap
(question keywords found in the passages) is what the reranker's boosts see. The question's own
embedding, with the run's embedder, carries "is this the corpus's kind of question" that no pool
statistic does. The caller gathers the texts and vectors from the store (studies.gating.gate_data).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.reference import RAG_DEFAULT_TOP_K, RAG_MIN_FINAL_SCORE
from nomad_lab.gate.keywords import extract_keywords, preprocess_query
from nomad_lab.gate.pools import PoolSet

TOP_SCORES = 10
"""How many sorted final and semantic scores are features (a pool holds up to top k × 3)."""

KINDS = ("pool", "query", "judge")
"""Feature groups a learned gate may read: pool statistics, the query embedding, the judge's P(true)."""


def _sorted_top(values: np.ndarray, valid: np.ndarray, k: int) -> np.ndarray:
    filled = np.where(valid, values, -np.inf)
    ordered = -np.sort(-filled, axis=1)[:, :k]
    if ordered.shape[1] < k:
        ordered = np.pad(ordered, ((0, 0), (0, k - ordered.shape[1])), constant_values=-np.inf)
    return np.where(np.isfinite(ordered), ordered, 0.0)  # a missing candidate scores 0


def pool_features(
    pools: PoolSet,
    overlap: np.ndarray | None = None,
    floor: float = RAG_MIN_FINAL_SCORE,
    k: int = TOP_SCORES,
) -> tuple[np.ndarray, list[str]]:
    """The pool-statistics matrix ``(n, f)`` and its column names (no NaN: empty pools score 0)."""
    valid = pools.valid
    final = _sorted_top(pools.score, valid, k)
    semantic = _sorted_top(pools.semantic, valid, k)
    top = final[:, :RAG_DEFAULT_TOP_K]
    count = valid.sum(axis=1)
    mean = top.mean(axis=1)
    std = top.std(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        pool_mean = np.where(count > 0, np.nansum(np.where(valid, pools.score, 0.0), axis=1) / count, 0.0)
        nqc = np.where(np.abs(mean) > 1e-9, std / np.abs(mean), 0.0)
    columns = [
        *final.T,
        *semantic.T,
        final[:, 0] - final[:, 1],
        mean,
        std,
        nqc,
        mean - pool_mean,
        (np.where(valid, pools.score, -np.inf) >= floor).sum(axis=1),
        count,
    ]
    names = [
        *(f"final_{i + 1}" for i in range(k)),
        *(f"semantic_{i + 1}" for i in range(k)),
        "gap_1_2",
        f"mean_top{RAG_DEFAULT_TOP_K}",
        f"std_top{RAG_DEFAULT_TOP_K}",
        "nqc",
        "wig",
        "above_floor",
        "pool_size",
    ]
    if overlap is not None:
        columns.append(np.asarray(overlap, dtype=float))
        names.append("keyword_overlap")
    return np.column_stack(columns).astype(float), names


def keyword_overlap(query: str, passages: Sequence[str]) -> float:
    """Share of the question's keywords (as the reranker extracts them) found in the passages' text."""
    keywords = set(extract_keywords(preprocess_query(query)))
    if not keywords:
        return 0.0
    text = " ".join(passages).lower()
    return sum(1 for word in keywords if word in text) / len(keywords)


@dataclass(frozen=True)
class FeatureTable:
    """Every feature of a run's questions, grouped by kind, with where they came from.

    ``query`` holds the question embeddings (None when not gathered); ``embedder`` the identity of the
    embedder that made them and the pools (a learned gate refuses another's); ``p_true`` one judge's
    P(true) per question (NaN: no verdict).
    """

    ids: list[str]
    pool: np.ndarray
    pool_names: list[str]
    query: np.ndarray | None = None
    embedder: Mapping[str, Any] | None = None
    p_true: np.ndarray | None = None
    source: Mapping[str, Any] = field(default_factory=dict)

    def matrix(self, kinds: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        """The columns of the named kinds side by side, and their names."""
        blocks, names = [], []
        for kind in kinds:
            if kind == "pool":
                blocks.append(self.pool)
                names += self.pool_names
            elif kind == "query":
                if self.query is None:
                    raise NomadLabError("features: the query embedding was not gathered for this run")
                blocks.append(self.query)
                names += [f"query_{i}" for i in range(self.query.shape[1])]
            elif kind == "judge":
                if self.p_true is None:
                    raise NomadLabError("features: no judge P(true) was gathered for this run")
                blocks.append(np.nan_to_num(self.p_true, nan=0.5)[:, None])
                names.append("judge_p_true")
            else:
                raise NomadLabError(f"features: unknown kind {kind!r} (known: {', '.join(KINDS)})")
        return np.column_stack(blocks) if blocks else np.zeros((len(self.ids), 0)), names

    def subset(self, index: np.ndarray) -> FeatureTable:
        return FeatureTable(
            [self.ids[i] for i in index],
            self.pool[index],
            self.pool_names,
            None if self.query is None else self.query[index],
            self.embedder,
            None if self.p_true is None else self.p_true[index],
            self.source,
        )
