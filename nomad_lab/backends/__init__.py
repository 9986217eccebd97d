"""Model backends: one interface over native Ollama, OpenAI-compatible servers and embedded llama.cpp.

``open_backend(spec)`` is the only constructor callers need; the spec string (its forms are the kinds
registered in ``nomad_lab.backends.chat_kinds``, listed by ``accepted_forms()``) is the same in the CLI,
notebook parameters and Python.
Backend modules import their client libraries lazily, so importing this package stays cheap.
"""

from __future__ import annotations

from nomad_lab.backends import chat_kinds
from nomad_lab.backends.backend_spec import (
    BACKEND_SPEC,
    DEFAULT_SPEC,
    BackendSpec,
    BackendSpecError,
    accepted_forms,
    parse_spec,
)
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

__all__ = [
    "BACKEND_SPEC",
    "DEFAULT_SPEC",
    "Backend",
    "BackendError",
    "BackendSpec",
    "BackendSpecError",
    "ChatChunk",
    "ChatOptions",
    "ChatRequest",
    "ChatResult",
    "ModelEntry",
    "ModelInfo",
    "Usage",
    "accepted_forms",
    "collect_stream",
    "open_backend",
    "parse_spec",
]


def open_backend(spec: str | BackendSpec = DEFAULT_SPEC) -> Backend:
    """The backend a spec string names, opened by its registered kind (``nomad_lab.backends.chat_kinds``);
    a malformed spec raises ValueError listing the accepted forms."""
    parsed = parse_spec(spec)
    return chat_kinds.kinds()[parsed.kind].open(parsed)
