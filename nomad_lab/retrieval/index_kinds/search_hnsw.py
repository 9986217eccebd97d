"""Approximate search on faiss's HNSW graph: the kind of index the reference's Qdrant searches.

Why faiss: one well-kept library, a CPU wheel on PyPI, and the graph Qdrant's own HNSW follows (degree
``m``, build beam ``ef_construction``, search beam ``ef_search``). The graph only chooses which rows
enter the candidate net; each chosen row's score is then its exact cosine, computed as exact search
computes it, so exact and HNSW differ only where the graph misses a row exact search would have kept.
That is the question the paired comparison asks (``docs/gates_at_size.md``).

The graph is built once per index and parameters and kept in ``cache_dir`` (a build over 10^5 chunks
takes tens of seconds; a query, a few milliseconds at the default beam).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nomad_lab.retrieval.index_kinds import Hit
from nomad_lab.retrieval.index_kinds.search_exact import exact_cosines
from nomad_lab.retrieval.index_spec import IndexSpec

__all__ = ["HnswSearch"]


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero), float32 and contiguous, as faiss wants them."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.maximum(norms, 1e-12), dtype=np.float32)


class HnswSearch:
    """A faiss ``IndexHNSWFlat`` on inner product over unit rows; exact cosines for the rows it returns."""

    def __init__(self, graph: object, matrix: np.ndarray, ef_search: int) -> None:
        self.graph = graph
        self.matrix = matrix
        self.norms = np.linalg.norm(matrix, axis=1)
        self.ef_search = ef_search

    @classmethod
    def open(cls, matrix: np.ndarray, spec: IndexSpec, cache_dir: Path, name: str) -> HnswSearch:
        """Read the graph cached for this index and parameters, or build it and cache it."""
        import faiss  # heavy: the native library

        m, ef_construction = int(spec.options["m"]), int(spec.options["ef_construction"])
        path = cache_dir / f"{name}-hnsw-m{m}-efc{ef_construction}.faiss"
        if path.exists():
            graph = faiss.read_index(str(path))
            if graph.ntotal == len(matrix):
                return cls(graph, matrix, int(spec.options["ef_search"]))
        graph = faiss.IndexHNSWFlat(matrix.shape[1], m, faiss.METRIC_INNER_PRODUCT)
        graph.hnsw.efConstruction = ef_construction
        if len(matrix):
            graph.add(unit_rows(matrix))
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        faiss.write_index(graph, str(partial))
        partial.replace(path)  # a killed build leaves no half-written graph under the real name
        return cls(graph, matrix, int(spec.options["ef_search"]))

    def hits(self, query_vector: np.ndarray, limit: int, threshold: float) -> list[Hit]:
        import faiss  # heavy: the native library

        if not len(self.matrix) or limit <= 0:
            return []
        query = unit_rows(np.asarray(query_vector, dtype=np.float32)[None, :])
        params = faiss.SearchParametersHNSW(efSearch=max(self.ef_search, limit))
        _, ids = self.graph.search(query, min(limit, len(self.matrix)), params=params)
        rows = np.array([i for i in ids[0] if i >= 0], dtype=np.int64)
        cosines = exact_cosines(self.matrix[rows], self.norms[rows], query_vector)
        order = sorted(range(len(rows)), key=lambda j: (-cosines[j], rows[j]))
        return [Hit(int(rows[j]), float(cosines[j])) for j in order if cosines[j] >= threshold]
