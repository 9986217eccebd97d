"""``wordllama:`` or ``wordllama:<dimension>``: the static WordLlama model shipped in its wheel."""

from __future__ import annotations

from collections.abc import Mapping

from nomad_lab.retrieval.embedder_base import Embedder
from nomad_lab.retrieval.embedder_kinds import EmbedderKind
from nomad_lab.retrieval.embedder_spec import EmbedderSpec, bad_embedder
from nomad_lab.retrieval.embedders_local import WordLlamaEmbedder


def parse(text: str, rest: str, options: Mapping[str, str]) -> EmbedderSpec:
    if rest and not rest.isdigit():
        raise bad_embedder(text, f"wordllama: takes a dimension (64, 128, 256, ...), got {rest!r}")
    return EmbedderSpec(text, "wordllama", target=rest or "256", options=dict(options))


def open_wordllama(spec: EmbedderSpec, device: str) -> Embedder:
    return WordLlamaEmbedder(spec)


KIND = EmbedderKind("wordllama", ("wordllama:[<dimension>]",), parse, open_wordllama)
