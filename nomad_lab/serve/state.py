"""The shim's state and the request options both of its wires share (Ollama's ``/api`` and OpenAI's ``/v1``).

Why apart: the app (``ollama_server``) and the two body builders (``ollama_bodies``, ``openai_bodies``) all
read the one model the server serves and the log of what arrived; the option and log-probability shapes
are the same on both wires.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from nomad_lab.backends.base import ChatOptions
from nomad_lab.backends.embedded import EmbeddedBackend
from nomad_lab.backends.llama_models import DEFAULT_N_CTX, DEFAULT_THREADS, show_payload
from nomad_lab.core.verdict_confidence import TokenChoice
from nomad_lab.serve.embed_routes import EmbedModel

OPTION_NAMES = ("num_ctx", "num_predict", "temperature", "seed", "top_p", "top_k", "min_p", "repeat_penalty")


def now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class ShimState:
    """The one model this server serves, and the log of every request body it received."""

    def __init__(
        self,
        model: str,
        *,
        name: str | None = None,
        num_ctx: int = DEFAULT_N_CTX,
        threads: int = DEFAULT_THREADS,
        embed_model: EmbedModel | None = None,
    ) -> None:
        self.backend = EmbeddedBackend(model, n_ctx=num_ctx, threads=threads)
        base = name or self.backend.name
        self.name = base if ":" in base else f"{base}:latest"
        self.embed_model = embed_model
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def record(self, path: str, body: Any) -> None:
        with self._lock:
            self.requests.append({"path": path, "body": body, "at": time.time()})

    def serves(self, model: str | None) -> bool:
        """Ollama resolves a bare name to ``:latest``; accept both, and the embedded alias."""
        if not model:
            return False
        return model in (self.name, self.name.removesuffix(":latest"), self.backend.model)

    def details(self) -> dict[str, Any]:
        return show_payload(self.backend.loaded())["details"]

    def tag_entry(self) -> dict[str, Any]:
        size = self.backend.path.stat().st_size
        return {
            "name": self.name,
            "model": self.name,
            "modified_at": now_iso(),
            "size": size,
            "digest": uuid.uuid5(uuid.NAMESPACE_URL, str(self.backend.path)).hex,
            "details": self.details(),
        }


def chat_options(
    options: dict[str, Any] | None,
    *,
    format_: Any = None,
    keep_alive: Any = None,
    think: Any = None,
    logprobs: int | None = None,
) -> ChatOptions:
    """Ollama request options → our ``ChatOptions`` (unknown options are ignored, as Ollama does)."""
    known = {k: v for k, v in (options or {}).items() if k in OPTION_NAMES and v is not None}
    return ChatOptions(**known, format=format_ or None, keep_alive=keep_alive, think=think, logprobs=logprobs)


def requested_top_logprobs(wants: Any, top: Any) -> int | None:
    """Ollama's ``logprobs``/``top_logprobs`` (and OpenAI's, the same names): None unless asked; the
    count is clamped to the documented 0–20."""
    if wants is not True:
        return None
    return min(max(top, 0), 20) if isinstance(top, int) and not isinstance(top, bool) else 0


def wire_logprobs(choices: tuple[TokenChoice, ...] | None) -> list[dict[str, Any]]:
    """Token log-probabilities in Ollama's documented shape (OpenAI's ``logprobs.content`` is the same)."""

    def entry(token: str, logprob: float) -> dict[str, Any]:
        return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}

    return [
        {**entry(c.token, c.logprob), "top_logprobs": [entry(t, lp) for t, lp in c.top]}
        for c in choices or ()
    ]
