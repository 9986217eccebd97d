"""``gguf:<path or bundled alias>``: llama-cpp-python in embedding mode (mean pooling)."""

from __future__ import annotations

from collections.abc import Mapping

from nomad_lab.retrieval.embedder_base import Embedder
from nomad_lab.retrieval.embedder_kinds import EmbedderKind
from nomad_lab.retrieval.embedder_spec import EmbedderSpec, bad_embedder
from nomad_lab.retrieval.embedders_local import GGUFEmbedder


def parse(text: str, rest: str, options: Mapping[str, str]) -> EmbedderSpec:
    if not rest:
        raise bad_embedder(text, "gguf: needs a .gguf path or a bundled alias (smollm2-135m, gemma3-270m)")
    return EmbedderSpec(text, "gguf", target=rest, options=dict(options))


def open_gguf(spec: EmbedderSpec, device: str) -> Embedder:
    return GGUFEmbedder(spec)


KIND = EmbedderKind("gguf", ("gguf:<path or alias>",), parse, open_gguf)
