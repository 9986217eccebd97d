"""``openai://host:port/v1/<model>``: an OpenAI-compatible ``/v1/embeddings`` (LM Studio, llama.cpp
server, vLLM)."""

from __future__ import annotations

from collections.abc import Mapping

from nomad_lab.retrieval.embedder_base import Embedder
from nomad_lab.retrieval.embedder_kinds import EmbedderKind
from nomad_lab.retrieval.embedder_spec import EmbedderSpec, server_target
from nomad_lab.retrieval.embedders_remote import OpenAIEmbedder


def parse(text: str, rest: str, options: Mapping[str, str]) -> EmbedderSpec:
    base_url, model = server_target(text, rest, "openai", base_path="v1")
    return EmbedderSpec(text, "openai", base_url=base_url, model=model, options=dict(options))


def open_compatible(spec: EmbedderSpec, device: str) -> Embedder:
    return OpenAIEmbedder(spec)


KIND = EmbedderKind("openai", ("openai://host:port/v1/<model>",), parse, open_compatible)
