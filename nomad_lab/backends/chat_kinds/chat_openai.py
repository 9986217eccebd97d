"""``openai://HOST:PORT/v1/MODEL``: an OpenAI-compatible server (LM Studio, llama.cpp server, Ollama
``/v1``); ``openai+noformat://`` is the same but never sends a response format (the seed's behaviour)."""

from __future__ import annotations

from dataclasses import replace

from nomad_lab.backends.backend_spec import BackendSpec, bad_spec, parse_http
from nomad_lab.backends.base import Backend
from nomad_lab.backends.chat_kinds import ChatKind

FORMAT_MODES = ("auto", "json_schema", "json_object", "none")
NOFORMAT = "openai+noformat://"


def parse(text: str, prefix: str) -> BackendSpec:
    """The path up to and including ``v1`` is the API base; what follows is the model."""
    spec = parse_http("openai", text)
    segments = (spec.model or "").split("/")
    if "v1" not in segments:
        raise bad_spec(text, "an openai spec needs the API base path, e.g. /v1/MODEL")
    cut = segments.index("v1") + 1
    format_mode = "none" if prefix == NOFORMAT else spec.params.get("format", "auto")
    if format_mode not in FORMAT_MODES:
        raise bad_spec(text, f"format must be one of {', '.join(FORMAT_MODES)}")
    model = "/".join(segments[cut:]) or None
    return replace(spec, base_path="/" + "/".join(segments[:cut]), model=model, format_mode=format_mode)


def open_compatible(spec: BackendSpec) -> Backend:
    from nomad_lab.backends.openai_compat import OpenAICompatBackend  # heavy

    return OpenAICompatBackend(
        spec.base_url, spec.model, format_mode=spec.format_mode, timeout=spec.timeout_s
    )


KIND = ChatKind(
    name="openai",
    prefixes=("openai://", NOFORMAT),
    forms=(
        ("openai://HOST:PORT/v1/MODEL", "OpenAI-compatible (LM Studio, llama.cpp server, Ollama /v1)"),
        (NOFORMAT + "HOST:PORT/v1/MODEL", "the same, never sending a response format (the seed's)"),
    ),
    parse=parse,
    open=open_compatible,
    options=f"?timeout=SECONDS, ?format={'|'.join(FORMAT_MODES)}",
)
