"""The frozen body's reading of each (question, passage window) pair, cached on disk by model digest.

Why files beside the store and not rows in it: one pair is a (tokens x 2 x 384) half-precision array
(~0.3 MB); thousands of them memory-map from ``.npy`` files (the page cache holds what a training pass
reads, nothing is loaded twice) and a rerun of the fit reads them instead of running the ONNX body.
The key is the pair's exact text and the token limit; the folder is the ONNX file's digest, so another
model never reads these.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.gate.answer_file import AnswerGate, file_sha256
from nomad_lab.retrieval.answer_model import (
    MAX_LENGTH,
    WINDOW_STRIDE,
    WINDOW_WORDS,
    AnswerBody,
    BodyOut,
    dequantized_state,
    head_logits,
    make_head,
    passage_windows,
    quantized_state,
    shared_body,
)

CACHE_VERSION = "answer-pair-v2"
"""v2: one pair per body run, the [CLS] input and the logit kept in single precision (v1 read pairs in
batches and stored both in half precision, so a cached score differed from the same pair read alone)."""


def pair_key(question: str, passage: str) -> str:
    return hashlib.sha256(f"{CACHE_VERSION}\x00{MAX_LENGTH}\x00{question}\x00{passage}".encode()).hexdigest()


def cache_root(store_path: str | Path) -> Path:
    """Where a store's pair cache lives: a folder beside the DuckDB file."""
    return Path(store_path).parent / "answerability-cache"


class BodyCache:
    """(question, passage) -> the body's keys, values, [CLS] input and zero-shot logit, cached."""

    def __init__(self, root: str | Path, body: AnswerBody) -> None:
        self.body = body
        self.folder = Path(root) / body.digest
        self.computed = 0

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.npy"

    def read(
        self, pairs: Sequence[tuple[str, str]], progress: Callable[[int], None] | None = None, chunk: int = 64
    ) -> tuple[list[BodyOut], np.ndarray]:
        """Every pair's :class:`BodyOut` (memory-mapped) and zero-shot logit; missing ones are computed
        by the body in chunks and written before they are returned (an interrupted run resumes)."""
        keys = [pair_key(q, p) for q, p in pairs]
        todo = sorted(
            {k: pair for k, pair in zip(keys, pairs, strict=True) if not self._path(k).is_file()}.items()
        )
        for start in range(0, len(todo), chunk):
            part = todo[start : start + chunk]
            outs, logits = self.body.read([pair for _, pair in part])
            for (key, _), out, logit in zip(part, outs, logits, strict=True):
                self._write(key, out, float(logit))
            self.computed += len(part)
            if progress:
                progress(len(part))
        loaded = [self._load(k) for k in keys]
        return [out for out, _ in loaded], np.array([logit for _, logit in loaded], dtype=float)

    def _write(self, key: str, out: BodyOut, logit: float) -> None:
        d = out.k.shape[1]
        array = np.zeros((out.k.shape[0] + 2, 2, d), dtype=np.float16)
        # row 0: the [CLS] input's float32 bits; row 1: the zero-shot logit's; then keys, values (half)
        array[0] = np.asarray(out.h, dtype=np.float32).view(np.float16).reshape(2, d)
        array[1, 0, :2] = np.array([logit], dtype=np.float32).view(np.float16)
        array[2:, 0], array[2:, 1] = out.k, out.v
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".part.npy")
        np.save(partial, array)
        partial.replace(path)

    def _load(self, key: str) -> tuple[BodyOut, float]:
        array = np.load(self._path(key), mmap_mode="r")
        h = np.ascontiguousarray(array[0]).reshape(-1).view(np.float32)
        logit = float(np.ascontiguousarray(array[1, 0, :2]).view(np.float32)[0])
        return BodyOut(array[2:, 0], array[2:, 1], h), logit


def gate_head_weights(gate: AnswerGate, digest: str, where: str) -> dict[str, np.ndarray]:
    """The gate's fine-tuned head weights (INT8 dequantized), checked against the body's ``digest``."""
    gate.check_body(digest, where, CACHE_VERSION)
    with np.load(gate.weights_path) as stored:
        return dequantized_state({k: stored[k] for k in stored.files})


def load_gate_head(gate: AnswerGate, body: AnswerBody, where: str) -> Any:
    """The gate's fine-tuned head (INT8 weights dequantized), checked against the installed body."""
    return make_head(gate_head_weights(gate, body.digest, where), body.heads)


def gate_scores(
    gate: AnswerGate,
    questions: Sequence[tuple[str, Sequence[str]]],
    root: str | Path,
    where: str,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Each (question, passages) best window logit under the gate's head (NaN: no passage); the body's
    reading of each window is cached under ``root``."""
    body = shared_body()
    head = load_gate_head(gate, body, where)
    cache = BodyCache(root, body)
    per = [[(q, w) for p in passages for w in passage_windows(p)] for q, passages in questions]
    outs, _ = cache.read([pair for pairs in per for pair in pairs], progress)
    logits = head_logits(head, outs)
    best, at = [], 0
    for pairs in per:
        best.append(float(logits[at : at + len(pairs)].max()) if pairs else float("nan"))
        at += len(pairs)
    return np.array(best, dtype=float)


def save_gate_files(
    path: str | Path,
    head: Any,
    body: AnswerBody,
    threshold: float,
    embedder: dict[str, Any] | None,
    training: dict[str, Any],
    figures: dict[str, Any] | None = None,
    kind: type[AnswerGate] = AnswerGate,
    **fields: Any,
) -> Path:
    """Write ``path`` (the JSON record of a ``kind`` gate, with its own ``fields``) and the head beside
    it as INT8 ``.npz``; returns the JSON path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    weights = out.with_suffix(".npz")
    np.savez(weights, **quantized_state(head))
    gate = kind(
        threshold=float(threshold),
        weights=weights.name,
        weights_sha256=file_sha256(weights),
        body={
            "digest": body.digest,
            "reading": CACHE_VERSION,
            "topLayer": body.top,
            "heads": body.heads,
            "words": WINDOW_WORDS,
            "stride": WINDOW_STRIDE,
            "maxTokens": MAX_LENGTH,
        },
        embedder=None if embedder is None else dict(embedder),
        training=training,
        figures=figures or {},
        **fields,
    )
    return gate.save(out)
