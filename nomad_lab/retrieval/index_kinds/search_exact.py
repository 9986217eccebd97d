"""Exact search: every stored vector's cosine with the query, the candidate net taken from all of them.

The workbench's default since its first run, and the yardstick the approximate kinds are measured
against (``docs/gates_at_size.md``): at 10^5 chunks one query is a matrix-vector product and a partial
sort, milliseconds; at 10^7 the matrix alone no longer fits a laptop, which is when HNSW earns its keep.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from nomad_lab.retrieval.index_kinds import Hit

__all__ = ["ExactSearch", "exact_cosines", "top_stable"]


def top_stable(scores: np.ndarray, limit: int, threshold: float) -> list[int]:
    """Indices of the ``limit`` best scores >= ``threshold``, best first, lower index first on ties.

    Exactly ``np.argsort(-scores, kind="stable")[:limit]`` filtered by the threshold, without sorting
    every row: a partition finds the ``limit``-th best score, and only the rows at or above it (ties at
    the boundary included) are sorted. At 10^5 chunks this is what keeps a query in milliseconds.
    """
    if limit <= 0 or not len(scores):
        return []
    if limit < len(scores):
        cut = np.partition(scores, len(scores) - limit)[len(scores) - limit]
        candidates = np.flatnonzero(scores >= max(cut, threshold))
    else:
        candidates = np.flatnonzero(scores >= threshold)
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    return [int(i) for i in order[:limit]]


def exact_cosines(matrix: np.ndarray, norms: np.ndarray, query_vector: np.ndarray) -> np.ndarray:
    """Cosine of the query with each row (``norms`` the rows' lengths), as exact search computes it."""
    scaled = norms * max(float(np.linalg.norm(query_vector)), 1e-12)
    return (matrix @ query_vector) / np.maximum(scaled, 1e-12)


class ExactSearch:
    """Cosine against every row; ties broken by row order (stable), as the first builds did."""

    def __init__(self, matrix: np.ndarray) -> None:
        self.matrix = matrix

    @cached_property
    def norms(self) -> np.ndarray:
        """Each stored vector's length, computed once per index rather than once per query."""
        return np.linalg.norm(self.matrix, axis=1)

    def hits(self, query_vector: np.ndarray, limit: int, threshold: float) -> list[Hit]:
        if not len(self.matrix):
            return []
        cosines = exact_cosines(self.matrix, self.norms, query_vector)
        return [Hit(i, float(cosines[i])) for i in top_stable(cosines, limit, threshold)]
