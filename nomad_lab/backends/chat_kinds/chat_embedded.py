"""``embedded:NAME`` or ``embedded:/path/model.gguf``: llama-cpp-python in this process (the default)."""

from __future__ import annotations

from urllib.parse import parse_qsl

from nomad_lab.backends.backend_spec import BackendSpec, bad_spec
from nomad_lab.backends.base import Backend
from nomad_lab.backends.chat_kinds import ChatKind
from nomad_lab.backends.embedded import DEFAULT_N_CTX, DEFAULT_THREADS, EmbeddedBackend
from nomad_lab.backends.models import PART_MODELS

ALIASES = ("gemma3-270m", "smollm2-135m", *PART_MODELS)
"""The embedded models by name: the two defaults, and the judge ladder's Qwen GGUFs (opt-in extra)."""


def parse(text: str, prefix: str) -> BackendSpec:
    target, _, query = text[len(prefix) :].partition("?")
    params = dict(parse_qsl(query, keep_blank_values=True))
    if not target:
        raise bad_spec(text, "name a model after embedded:")
    if target not in ALIASES and not target.endswith(".gguf"):
        raise bad_spec(text, f"unknown embedded model {target!r}")
    for name in ("n_ctx", "threads"):
        if name in params and not params[name].isdigit():
            raise bad_spec(text, f"{name} must be a positive integer")
    return BackendSpec("embedded", text, model=target, params=params)


def open_embedded(spec: BackendSpec) -> Backend:
    return EmbeddedBackend(
        spec.model or "gemma3-270m",
        n_ctx=int(spec.params.get("n_ctx", DEFAULT_N_CTX)),
        threads=int(spec.params.get("threads", DEFAULT_THREADS)),
        chat_format=spec.params.get("chat_format"),
    )


KIND = ChatKind(
    name="embedded",
    prefixes=("embedded:",),
    forms=(
        (
            f"embedded:{ALIASES[0]}",
            "llama-cpp-python in-process (the default); also "
            + ", ".join(f"embedded:{alias}" for alias in ALIASES[1:]),
        ),
        ("embedded:/path/to/model.gguf", "the same, any GGUF file"),
    ),
    parse=parse,
    open=open_embedded,
    options="?n_ctx=N&threads=N",
)
