"""``auto://HOST:PORT/MODEL``: probe ``GET /api/tags`` (SPEC 7.1); native Ollama if it answers, else
``/v1``."""

from __future__ import annotations

from nomad_lab.backends.backend_spec import BackendSpec, parse_http
from nomad_lab.backends.base import Backend
from nomad_lab.backends.chat_kinds import ChatKind


def parse(text: str, prefix: str) -> BackendSpec:
    return parse_http("auto", text)


def open_probed(spec: BackendSpec) -> Backend:
    from nomad_lab.backends.ollama_native import BackendDetector, OllamaBackend  # heavy

    if BackendDetector().is_native(spec.base_url):
        return OllamaBackend(spec.base_url, spec.model, timeout=spec.timeout_s)
    from nomad_lab.backends.openai_compat import OpenAICompatBackend  # heavy

    return OpenAICompatBackend(f"{spec.base_url}/v1", spec.model, timeout=spec.timeout_s)


KIND = ChatKind(
    name="auto",
    prefixes=("auto://",),
    forms=(("auto://HOST:PORT/MODEL", "probe GET /api/tags: native Ollama if it answers, else /v1"),),
    parse=parse,
    open=open_probed,
    options="?timeout=SECONDS",
)
