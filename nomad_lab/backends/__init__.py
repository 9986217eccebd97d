"""Model backends: one interface over native Ollama, OpenAI-compatible servers and embedded llama.cpp.

``open_backend(spec)`` is the only constructor callers need; the spec string (see
``nomad_lab.backends.spec.ACCEPTED_FORMS``) is the same in the CLI, notebook parameters and Python.
Backend modules import their client libraries lazily, so importing this package stays cheap.
"""

from __future__ import annotations

from nomad_lab.backends.base import (
    Backend,
    BackendError,
    ChatChunk,
    ChatOptions,
    ChatRequest,
    ChatResult,
    ModelEntry,
    ModelInfo,
    Usage,
    collect_stream,
)
from nomad_lab.backends.embedded import DEFAULT_N_CTX, DEFAULT_THREADS, EmbeddedBackend
from nomad_lab.backends.spec import ACCEPTED_FORMS, DEFAULT_SPEC, BackendSpec, parse_spec

DEFAULT_HTTP_TIMEOUT_S = 120.0
"""Per-request HTTP timeout when the spec names none: long enough for a cold model load on 2 cores."""

__all__ = [
    "ACCEPTED_FORMS",
    "DEFAULT_SPEC",
    "Backend",
    "BackendError",
    "BackendSpec",
    "ChatChunk",
    "ChatOptions",
    "ChatRequest",
    "ChatResult",
    "ModelEntry",
    "ModelInfo",
    "Usage",
    "collect_stream",
    "open_backend",
    "parse_spec",
]


def open_backend(spec: str | BackendSpec = DEFAULT_SPEC) -> Backend:
    """The backend a spec string names; a malformed spec raises ValueError listing the accepted forms."""
    parsed = spec if isinstance(spec, BackendSpec) else parse_spec(spec)
    timeout = parsed.timeout or DEFAULT_HTTP_TIMEOUT_S
    if parsed.kind == "embedded":
        return EmbeddedBackend(
            parsed.model or "gemma3-270m",
            n_ctx=int(parsed.params.get("n_ctx", DEFAULT_N_CTX)),
            threads=int(parsed.params.get("threads", DEFAULT_THREADS)),
            chat_format=parsed.params.get("chat_format"),
        )
    if parsed.kind == "auto":
        from nomad_lab.backends.ollama_native import BackendDetector  # heavy

        if not BackendDetector().is_native(parsed.base_url):
            from nomad_lab.backends.openai_compat import OpenAICompatBackend  # heavy

            return OpenAICompatBackend(f"{parsed.base_url}/v1", parsed.model, timeout=timeout)
    if parsed.kind in ("ollama", "auto"):
        from nomad_lab.backends.ollama_native import OllamaBackend  # heavy

        return OllamaBackend(parsed.base_url, parsed.model, timeout=timeout)
    from nomad_lab.backends.openai_compat import OpenAICompatBackend  # heavy

    return OpenAICompatBackend(parsed.base_url, parsed.model, format_mode=parsed.format_mode, timeout=timeout)
