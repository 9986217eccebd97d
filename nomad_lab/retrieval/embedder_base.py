"""The :class:`Embedder` interface every embedding backend shares: windows, prefixes, batching, validation
and identity (see ``nomad_lab.retrieval.embedding`` for why texts are windowed)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from nomad_lab.retrieval.embedder_spec import EmbedderError, EmbedderSpec

__all__ = ["Embedder", "equal_windows", "force_offline"]


def force_offline() -> None:
    """Nothing may reach a model hub: the weights ship in a package."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def equal_windows(length: int, limit: int) -> list[tuple[int, int]]:
    """(start, end) of the fewest near-equal windows of at most ``limit`` covering ``range(length)``."""
    count = max(1, math.ceil(length / limit))
    size = max(1, math.ceil(length / count))
    return [(start, min(start + size, length)) for start in range(0, max(length, 1), size)]


class Embedder:
    """The interface every backend shares: windows, prefixes, batching, validation and the identity.

    A backend sets ``spec``, ``name``, ``model_version``, ``dimension`` and ``batch_size`` and implements
    ``_forward`` (one vector per window payload); a char-windowed backend also sets ``window_chars``.
    """

    spec: EmbedderSpec
    name: str
    model_version: str
    dimension: int
    batch_size: int = 32
    window_chars: int = 1000

    @property
    def prefixes(self) -> tuple[str, str]:
        return self.spec.prefixes

    @property
    def window_description(self) -> str:
        return f"max {self.window_chars} characters per window"

    @property
    def method(self) -> str:
        """How texts become vectors; recorded in the fingerprint and the run parameters."""
        query, document = self.prefixes
        prefix = (
            "no prefix"
            if not (query or document)
            else f"query prefix {query!r}, document prefix {document!r}"
        )
        return (
            f"mean-of-normalized-windows({self.window_description}, equal-size windows, no overlap, "
            f"{prefix}; mean renormalized)"
        )

    @property
    def model_key(self) -> str:
        """Identifies the vectors this embedder produces (the embedding cache key in the store)."""
        return f"{self.name}|{self.model_version}|{self.method}"

    def identity(self) -> dict[str, Any]:
        """What an index built with this embedder depends on, for run parameters and reports."""
        query, document = self.prefixes
        return {
            "spec": self.spec.text,
            "model": self.name,
            "version": self.model_version,
            "dimension": self.dimension,
            "queryPrefix": query,
            "documentPrefix": document,
            "method": self.method,
        }

    def _windows(self, texts: Sequence[str], prefix: str = "") -> list[tuple[int, Any]]:
        """(text index, payload) per window; characters here, word pieces for sentence-transformers."""
        return [
            (index, prefix + text[start:end])
            for index, text in enumerate(texts)
            for start, end in equal_windows(len(text), self.window_chars)
        ]

    def _forward(self, batch: Sequence[Any]) -> np.ndarray:
        raise NotImplementedError

    def checked(self, vectors: Any, expected: int) -> np.ndarray:
        """The backend's answer as an ``(expected, dimension)`` float matrix, or one clear error line."""
        array = np.asarray(vectors, dtype=np.float64)
        if array.ndim != 2 or array.shape[0] != expected:
            raise EmbedderError(
                f"embedder {self.spec.text}: asked for {expected} vector(s), got shape {array.shape}"
            )
        if array.shape[1] != self.dimension:
            raise EmbedderError(
                f"embedder {self.spec.text}: returned {array.shape[1]}-dimensional vectors, "
                f"expected {self.dimension}"
            )
        if not np.isfinite(array).all():
            raise EmbedderError(f"embedder {self.spec.text}: returned NaN or infinite values")
        norms = np.linalg.norm(array, axis=1, keepdims=True)
        if (norms == 0).any():
            raise EmbedderError(f"embedder {self.spec.text}: returned an all-zero vector")
        return array / norms

    def embed(
        self, texts: Sequence[str], progress: bool = False, desc: str = "embedding", kind: str = "document"
    ) -> np.ndarray:
        """Unit vectors, shape ``(len(texts), dimension)``, float32; ``kind`` picks the query or document
        prefix (``"raw"``: none, as a server embeds what it is sent). Every part of every text counts."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        from tqdm.auto import tqdm  # heavy

        query, document = self.prefixes
        windows = self._windows(texts, {"query": query, "document": document}.get(kind, ""))
        order = sorted(range(len(windows)), key=lambda i: -len(windows[i][1]))  # similar lengths pad less
        sums = np.zeros((len(texts), self.dimension), dtype=np.float64)
        remaining = np.bincount([w[0] for w in windows], minlength=len(texts))
        with tqdm(total=len(texts), desc=desc, unit="text", disable=not progress) as bar:
            for begin in range(0, len(order), self.batch_size):
                batch = order[begin : begin + self.batch_size]
                vectors = self.checked(self._forward([windows[i][1] for i in batch]), len(batch))
                for i, vector in zip(batch, vectors, strict=True):
                    text_index = windows[i][0]
                    sums[text_index] += vector
                    remaining[text_index] -= 1
                    if remaining[text_index] == 0:
                        bar.update(1)
        norms = np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
        return (sums / norms).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """One unit vector for a query (queries use the same method; most fit one window)."""
        return self.embed([text], kind="query")[0]
