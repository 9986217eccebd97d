"""Text embeddings for retrieval: one :class:`Embedder` interface over every kind an embedder spec names.

Why a window method: a model reads a bounded number of tokens (MiniLM 256 word pieces), but a
3,000-character chunk is ~600+. Truncating would silently embed only the head of every chunk, so a fact
in its second half could never be retrieved. Every text is therefore cut into near-equal windows that fit
the model, each window is embedded and L2-normalized, and the text's vector is the mean of its window
vectors, renormalized. Equal-size windows mean no tiny tail window gets the same weight as a full one.
sentence-transformers models are windowed by their own word pieces (a text that fits one window gets
exactly the vector ``encode`` gives); the other backends, whose tokenizer is on the far side of an HTTP
call or opaque, are windowed by characters (``window_chars``). The method string, the prefixes and the
model's version or digest are the embedder's identity: they are part of the corpus fingerprint and of the
store's embedding cache key, so changing any of them re-embeds.

Prefixes: nomic-embed-text was trained with ``search_query: `` / ``search_document: `` (the reference uses
them); MiniLM was not, so it gets none. See ``embedder_spec.PREFIX_TABLE``; a spec can override them.
"""

from __future__ import annotations

from nomad_lab.backends.work_log import note_use
from nomad_lab.retrieval import embedder_kinds
from nomad_lab.retrieval.embedder_base import Embedder
from nomad_lab.retrieval.embedder_spec import DEFAULT_EMBEDDER_SPEC, EmbedderSpec, parse_embedder_spec

__all__ = ["Embedder", "load_embedder", "open_embedder"]


def open_embedder(spec: EmbedderSpec, device: str = "cpu") -> Embedder:
    """A fresh embedder for a parsed spec, opened by its registered kind
    (:mod:`nomad_lab.retrieval.embedder_kinds`; servers are probed once: up, and their dimension)."""
    return embedder_kinds.kinds()[spec.kind].open(spec, device)


_SHARED: dict[tuple[str, str], Embedder] = {}


def load_embedder(spec: str | EmbedderSpec | None = None, device: str = "cpu") -> Embedder:
    """One embedder per spec and process: loading takes seconds; CLI, notebooks and tests share it.

    ``spec`` is an embedder spec string (see ``embedder_spec``), a parsed one, or None for MiniLM.
    """
    parsed = spec if isinstance(spec, EmbedderSpec) else parse_embedder_spec(spec or DEFAULT_EMBEDDER_SPEC)
    key = (
        repr((parsed.kind, parsed.target, parsed.base_url, parsed.model, sorted(parsed.options.items()))),
        device,
    )
    if key not in _SHARED:
        _SHARED[key] = open_embedder(parsed, device=device)
    note_use("embedders", parsed.text, str(_SHARED[key].model_version))
    return _SHARED[key]
