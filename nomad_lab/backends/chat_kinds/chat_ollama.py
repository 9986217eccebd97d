"""``ollama://HOST:PORT/MODEL``: the native Ollama API (``/api/chat``)."""

from __future__ import annotations

from nomad_lab.backends.backend_spec import BackendSpec, parse_http
from nomad_lab.backends.base import Backend
from nomad_lab.backends.chat_kinds import ChatKind


def parse(text: str, prefix: str) -> BackendSpec:
    return parse_http("ollama", text)


def open_ollama(spec: BackendSpec) -> Backend:
    from nomad_lab.backends.ollama_native import OllamaBackend  # heavy

    return OllamaBackend(spec.base_url, spec.model, timeout=spec.timeout_s)


KIND = ChatKind(
    name="ollama",
    prefixes=("ollama://",),
    forms=(
        (
            "ollama://HOST:PORT/MODEL",
            "native Ollama API (/api/chat), e.g. ollama://127.0.0.1:11434/llama3:8b",
        ),
    ),
    parse=parse,
    open=open_ollama,
    options="?timeout=SECONDS",
)
