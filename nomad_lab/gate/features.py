"""Per-question gate features from what retrieval already computed: no model call, no I/O.

Why these: a stored pool holds every candidate's final and semantic score, so the statistics a query
performance predictor reads (the sorted top-k scores, the top-two gap, mean and spread, an NQC-like
spread over |mean|, a WIG-like top-k mean over the pool mean, how many pass the floor) are free; the
literature finds a linear model over the sorted scores beats any single one of them. Keyword overlap
(question keywords found in the passages) is what the reranker's boosts see. The question's own
embedding, with the run's embedder, carries "is this the corpus's kind of question" that no pool
statistic does. The gating service (:mod:`nomad_lab.eval.gating`) gathers texts and vectors from the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.reference import RAG_DEFAULT_TOP_K, RAG_MIN_FINAL_SCORE
from nomad_lab.gate.pools import PoolSet

TOP_SCORES = 10
"""How many sorted final and semantic scores are features (a pool holds up to top k × 3)."""


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
    semantic_scores: bool = True,
) -> tuple[np.ndarray, list[str]]:
    """The pool-statistics matrix ``(n, f)`` and its column names (no NaN: empty pools score 0).

    ``semantic_scores`` False leaves out ``semantic_1..k`` (a pool file without raw cosines), and
    ``overlap`` None leaves out ``keyword_overlap`` (no passage texts)."""
    valid = pools.valid
    final = _sorted_top(pools.score, valid, k)
    semantic = _sorted_top(pools.semantic, valid, k) if semantic_scores else np.zeros((pools.size, 0))
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
        *(f"semantic_{i + 1}" for i in range(semantic.shape[1])),
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


def score_features(
    columns: Mapping[str, np.ndarray], valid: np.ndarray, k: int
) -> tuple[np.ndarray, list[str]]:
    """Each named score column's sorted top ``k`` values per pool (``score_NAME_1..k``, 0 if fewer)."""
    blocks = [_sorted_top(values, valid, k) for values in columns.values()]
    names = [f"score_{name}_{i + 1}" for name in columns for i in range(k)]
    return (np.column_stack(blocks) if blocks else np.zeros((valid.shape[0], 0))), names


@dataclass(frozen=True)
class FeatureBlock:
    """One kind of feature for every question of a run: a matrix ``(n, f)``, its column names, and the
    embedder identity its values depend on (pool scores and query vectors; None for a kind that does
    not, such as a cross-encoder's logits). ``cost`` is (model passes, milliseconds) per question that
    computing the block took, for a kind a model makes: a gate that reads it pays that too."""

    matrix: np.ndarray
    names: list[str]
    embedder: Mapping[str, Any] | None = None
    cost: tuple[float, float] | None = None

    def subset(self, index: np.ndarray) -> FeatureBlock:
        return FeatureBlock(self.matrix[index], self.names, self.embedder, self.cost)


@dataclass(frozen=True)
class FeatureTable:
    """Every gathered feature of a run's questions, one :class:`FeatureBlock` per kind (``pool``
    statistics, the ``query`` embedding, the ``judge``'s P(true), and whatever kinds the gating service
    gathers), with where they came from. ``embedder`` is the identity of the embedder that made the
    pools and vectors: a learned gate refuses another's."""

    ids: list[str]
    blocks: Mapping[str, FeatureBlock]
    embedder: Mapping[str, Any] | None = None
    source: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, blocks: Mapping[str, FeatureBlock], ids: Sequence[str] = ()) -> FeatureTable:
        """A table of gathered blocks; its embedder is the one any block records."""
        embedder = next((b.embedder for b in blocks.values() if b.embedder is not None), None)
        return cls(list(ids), dict(blocks), embedder)

    @property
    def query(self) -> np.ndarray | None:
        """The question embeddings, when gathered (near-duplicate grouping reads them)."""
        block = self.blocks.get("query")
        return None if block is None else block.matrix

    def with_blocks(self, blocks: Mapping[str, FeatureBlock]) -> FeatureTable:
        return FeatureTable(self.ids, {**self.blocks, **blocks}, self.embedder, self.source)

    def matrix(self, kinds: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        """The columns of the named kinds side by side, and their names."""
        missing = [k for k in kinds if k not in self.blocks]
        if missing:
            raise NomadLabError(
                f"features: {', '.join(missing)} not gathered for this run "
                f"(gathered: {', '.join(self.blocks) or 'none'})"
            )
        blocks = [self.blocks[k] for k in kinds]
        matrix = np.column_stack([b.matrix for b in blocks]) if blocks else np.zeros((len(self.ids), 0))
        return matrix, [name for b in blocks for name in b.names]

    def subset(self, index: np.ndarray) -> FeatureTable:
        return FeatureTable(
            [self.ids[i] for i in index],
            {k: b.subset(index) for k, b in self.blocks.items()},
            self.embedder,
            self.source,
        )
