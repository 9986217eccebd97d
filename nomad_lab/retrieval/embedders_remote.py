"""Embedders behind HTTP: Ollama's ``/api/embed`` and OpenAI-compatible ``/v1/embeddings``.

Why probe at open: a server that is down, or a model that is not pulled, must fail before an index build
starts, with one line naming the spec; and the probe's vector fixes the dimension every later answer is
checked against. Identity: Ollama reports each model's digest in ``/api/tags``, so a re-pulled model gets a
new cache key; OpenAI-compatible servers report none, so the spec's ``version`` option (default
``unversioned@<server>``) stands in. Windows are characters (the server's tokenizer is out of reach); the
default window fits the model's context: the whole 3,000-character chunk for nomic-embed-text (2,048 tokens in
Ollama, as the reference embeds it), 1,000 characters otherwise (fits a 512-token model).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nomad_lab.retrieval.embedder_base import Embedder
from nomad_lab.retrieval.embedder_spec import EmbedderError, EmbedderSpec

__all__ = ["OllamaEmbedder", "OpenAIEmbedder", "default_window_chars"]

TIMEOUT_SECONDS = 300.0
LONG_CONTEXT_MODELS = {"nomic-embed-text": 3000, "bge-m3": 3000}


def default_window_chars(model: str) -> int:
    base = model.rsplit("/", 1)[-1].split(":", 1)[0].lower()
    return next((chars for name, chars in LONG_CONTEXT_MODELS.items() if base.startswith(name)), 1000)


class HTTPEmbedder(Embedder):
    """Shared by both protocols: the client, the probe, one POST per batch with clear failures."""

    path = ""

    def __init__(self, spec: EmbedderSpec):
        import httpx  # heavy

        self.spec = spec
        self.name = spec.model
        self.batch_size = spec.int_option("batch", 32)
        self.window_chars = spec.int_option("window_chars", default_window_chars(spec.model))
        self.client = httpx.Client(base_url=spec.base_url, timeout=TIMEOUT_SECONDS)
        self.model_version = self._version()
        probe = np.asarray(self._post(["dimension probe"]), dtype=np.float64)
        if probe.ndim != 2 or probe.shape[0] != 1 or probe.shape[1] < 1:
            raise EmbedderError(
                f"embedder {spec.text}: the probe returned shape {probe.shape}, not one vector"
            )
        self.dimension = int(probe.shape[1])

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        import httpx  # heavy

        try:
            response = self.client.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise EmbedderError(
                f"embedder {self.spec.text}: {self.spec.base_url}{path} is unreachable ({exc})"
            ) from None
        if response.status_code != 200:
            raise EmbedderError(
                f"embedder {self.spec.text}: {path} answered HTTP {response.status_code}: "
                f"{response.text[:200]}"
            )
        try:
            return response.json()
        except ValueError:
            raise EmbedderError(f"embedder {self.spec.text}: {path} answered non-JSON") from None

    def _version(self) -> str:
        raise NotImplementedError

    def _post(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError

    def _forward(self, batch: Sequence[str]) -> np.ndarray:
        return np.asarray(self._post(list(batch)), dtype=np.float64)

    def _malformed(self, what: str) -> EmbedderError:
        return EmbedderError(f"embedder {self.spec.text}: {self.path} answer has no {what}")


class OllamaEmbedder(HTTPEmbedder):
    """``ollama://host:port/<model>``: batched ``POST /api/embed`` (Ollama >= 0.3.4)."""

    path = "/api/embed"

    def _version(self) -> str:
        if "version" in self.spec.options:
            return self.spec.options["version"]
        models = self._request("GET", "/api/tags").get("models") or []
        wanted = {self.spec.model, f"{self.spec.model}:latest"}
        for entry in models:
            if entry.get("name") in wanted or entry.get("model") in wanted:
                return f"digest:{entry.get('digest', 'unknown')}"
        raise EmbedderError(
            f"embedder {self.spec.text}: model {self.spec.model!r} is not on the server "
            f"(it has: {', '.join(sorted(str(m.get('name')) for m in models)) or 'none'}); pull it first"
        )

    def _post(self, texts: list[str]) -> list[list[float]]:
        answer = self._request(
            "POST", self.path, {"model": self.spec.model, "input": texts, "truncate": True}
        )
        if not isinstance(answer, dict) or not isinstance(answer.get("embeddings"), list):
            raise self._malformed("'embeddings' list")
        return answer["embeddings"]


class OpenAIEmbedder(HTTPEmbedder):
    """``openai://host:port/v1/<model>``: batched ``POST /v1/embeddings``, answers put back in input order."""

    path = "/v1/embeddings"

    def _version(self) -> str:
        return self.spec.options.get("version", f"unversioned@{self.spec.base_url}")

    def _post(self, texts: list[str]) -> list[list[float]]:
        answer = self._request(
            "POST", self.path, {"model": self.spec.model, "input": texts, "encoding_format": "float"}
        )
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or not all(isinstance(d, dict) and "embedding" in d for d in data):
            raise self._malformed("'data' list of embeddings")
        return [d["embedding"] for d in sorted(data, key=lambda d: d.get("index", 0))]
