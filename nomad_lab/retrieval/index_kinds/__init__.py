"""The index kinds retrieval searches, one module each: exact cosine, faiss HNSW, Qdrant.

Each kind answers one question, "which stored chunks form the candidate net of this query vector?"
(cosine >= threshold, best first, at most ``limit``: SPEC §2.2 step 4). :func:`open_search` opens the
kind an :class:`~nomad_lab.retrieval.index_spec.IndexSpec` names; the rerank, floor and diversity that
follow are the same for every kind (``nomad_lab.gate.reference_ranking``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from nomad_lab.retrieval.index_spec import IndexSpec

__all__ = ["Hit", "Search", "open_search"]


@dataclass(frozen=True)
class Hit:
    """One point of the candidate net: the stored row it is (None for a server's own collection), its
    cosine, and the payload a server returned (None for rows of the workspace index)."""

    row: int | None
    cosine: float
    payload: dict[str, Any] | None = None


class Search(Protocol):
    """A candidate net over one index: ``hits(query_vector, limit, threshold)``, best first."""

    def hits(self, query_vector: np.ndarray, limit: int, threshold: float) -> list[Hit]: ...


def open_search(spec: IndexSpec, matrix: np.ndarray, cache_dir: Path, name: str, rows: Any = None) -> Search:
    """The search ``spec`` names over ``matrix`` (the workspace index's unit vectors, row for row).

    ``cache_dir`` keeps what a kind builds from the matrix (an HNSW graph, a local Qdrant collection),
    under ``name`` (the index fingerprint and model), so a second search of the same index builds
    nothing; ``rows`` are the chunk records a local Qdrant collection is written from.
    """
    if spec.kind == "exact":
        from nomad_lab.retrieval.index_kinds.search_exact import ExactSearch  # cycle: imports Hit

        return ExactSearch(matrix)
    if spec.kind == "hnsw":
        from nomad_lab.retrieval.index_kinds.search_hnsw import HnswSearch  # cycle: imports Hit

        return HnswSearch.open(matrix, spec, cache_dir, name)
    from nomad_lab.retrieval.index_kinds.search_qdrant import QdrantSearch  # cycle: imports Hit

    return QdrantSearch.open(spec, matrix, cache_dir, name, rows)
