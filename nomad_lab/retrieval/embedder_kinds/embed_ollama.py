"""``ollama://host:port/<model>``: Ollama's ``/api/embed``."""

from __future__ import annotations

from collections.abc import Mapping

from nomad_lab.retrieval.embedder_base import Embedder
from nomad_lab.retrieval.embedder_kinds import EmbedderKind
from nomad_lab.retrieval.embedder_spec import EmbedderSpec, server_target
from nomad_lab.retrieval.embedders_remote import OllamaEmbedder


def parse(text: str, rest: str, options: Mapping[str, str]) -> EmbedderSpec:
    base_url, model = server_target(text, rest, "ollama")
    return EmbedderSpec(text, "ollama", base_url=base_url, model=model, options=dict(options))


def open_ollama(spec: EmbedderSpec, device: str) -> Embedder:
    return OllamaEmbedder(spec)


KIND = EmbedderKind("ollama", ("ollama://host:port/<model>",), parse, open_ollama)
