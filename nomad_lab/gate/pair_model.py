"""The cross-encoder a gate reads, at apply time: its windows, its ONNX runner and its three features.

Why in the gate ring: a pipeline applying a cross-encoder gate (:mod:`nomad_lab.gate.runtime`, and
through it the framework adapters) must score passages exactly as the workbench scored them when the gate
was fitted, without the workbench; so the pieces that fix a score (how a passage is cut into windows, how
a pair is tokenized, truncated and run, how a two-class head becomes a logit, how a top set's passage
scores become features) live here, and the workbench's scorer (:mod:`nomad_lab.retrieval.cross_encoder`)
and gatherer (``eval.gating.inputs.ce_features``) use these same functions. onnxruntime and tokenizers
are imported only when a runner is made.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from nomad_lab.core.cpu_threads import cpu_threads
from nomad_lab.core.errors import NomadLabError

RERANK_HINT = "pip install -e .[rerank]"
CE_NAMES = ["ce_best", "ce_second", "ce_mean"]
Pairs = Sequence[tuple[str, str]]


class CrossEncoderError(NomadLabError, ValueError):
    """A cross-encoder spec that does not parse, or a model that is missing or will not load."""


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [exc.__class__.__name__])[0]


def files_sha256(paths: Iterable[Path]) -> str:
    """One SHA-256 over the files' bytes, in the given order (each file's length first, so the boundary
    between files counts); names are left out, so a renamed copy of a model is the same model."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(path.stat().st_size).encode() + b"\x00")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def logits(matrix: np.ndarray, where: str) -> np.ndarray:
    """One logit per row: a one-output head as it is, a two-class head as log-odds of class 1."""
    matrix = np.asarray(matrix, dtype=float).reshape(len(matrix), -1)
    if matrix.shape[1] == 1:
        return matrix[:, 0]
    if matrix.shape[1] == 2:
        return matrix[:, 1] - matrix[:, 0]
    raise CrossEncoderError(
        f"{where}: a head with {matrix.shape[1]} outputs is not a relevance cross-encoder"
    )


def batched(
    pairs: Pairs, lengths: Sequence[int], batch: int, run: Callable[[list[int]], np.ndarray]
) -> np.ndarray:
    """Scores in the pairs' order, computed in batches of similar length (``run`` takes pair indices)."""
    order = np.argsort(np.asarray(lengths), kind="stable")
    scores = np.empty(len(pairs))
    for start in range(0, len(order), batch):
        chunk = order[start : start + batch]
        scores[chunk] = run(chunk.tolist())
    return scores


def windows(text: str, window: int, stride: int) -> list[str]:
    """The passage's windows of ``window`` words every ``stride`` words, the last one ending at the end.

    Words are split on whitespace and joined by one space. ``window`` 0, or a passage no longer than a
    window, gives one window (the whole passage); an empty passage gives none.
    """
    words = text.split()
    if not words:
        return []
    if window == 0 or len(words) <= window:
        return [" ".join(words)]
    starts = list(range(0, len(words) - window + 1, stride))
    if starts[-1] + window < len(words):
        starts.append(len(words) - window)
    return [" ".join(words[s : s + window]) for s in starts]


class OnnxRunner:
    """An ONNX sequence-classification model and its ``tokenizer.json``; ``threads``: onnxruntime's
    intra-op threads, by default :func:`cpu_threads` (2, or NOMAD_LAB_THREADS on a shared machine)."""

    def __init__(
        self, model: Path, tokenizer: Path, threads: int | None, max_tokens: int, batch: int
    ) -> None:
        try:
            import onnxruntime  # optional, heavy
            from tokenizers import Tokenizer  # optional
        except ImportError as exc:
            raise CrossEncoderError(
                f"cross-encoder {model}: {first_line(exc)}; run `{RERANK_HINT}`"
            ) from None
        self.where = f"cross-encoder {model}"
        try:
            self.tokenizer = Tokenizer.from_file(str(tokenizer))
        except Exception as exc:  # tokenizers raises its own Exception type on a bad file
            raise CrossEncoderError(f"{tokenizer}: not a tokenizers file ({first_line(exc)})") from None
        padding = self.tokenizer.padding
        self.pad_id = int(padding["pad_id"]) if padding else 0
        self.tokenizer.no_padding()  # the file may pad every pair to 512; batches pad to their longest
        self.tokenizer.enable_truncation(max_tokens, strategy="longest_first")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or cpu_threads()
        options.inter_op_num_threads = 1
        try:
            self.session = onnxruntime.InferenceSession(
                str(model), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime's errors are not a public hierarchy
            raise CrossEncoderError(f"{self.where}: onnxruntime cannot load it ({first_line(exc)})") from None
        self.inputs = {i.name for i in self.session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= self.inputs:
            raise CrossEncoderError(
                f"{self.where}: expects inputs {sorted(self.inputs)}, not a BERT-style model"
            )
        # One pair per run: an INT8 model quantizes activations per batch tensor, so a batch-mate moved a
        # pair's logit by up to 1.06 here. It costs time (compare the gates page's cross-encoder cost per
        # question before and after ba24093, where the cache key began to name this), but a score that
        # depends on its batch-mates cannot be reproduced by a deploy that sees one question at a time.
        self.batch = 1

    def run(self, pairs: Pairs) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(list(pairs))

        def one(indices: list[int]) -> np.ndarray:
            width = max(len(encodings[i].ids) for i in indices)
            feed = {name: np.zeros((len(indices), width), dtype=np.int64) for name in self.inputs}
            feed["input_ids"][:] = self.pad_id
            for row, i in enumerate(indices):
                enc, n = encodings[i], len(encodings[i].ids)
                feed["input_ids"][row, :n] = enc.ids
                feed["attention_mask"][row, :n] = 1
                if "token_type_ids" in feed:
                    feed["token_type_ids"][row, :n] = enc.type_ids
            return logits(self.session.run(None, feed)[0], self.where)

        return batched(pairs, [len(e.ids) for e in encodings], self.batch, one)


def ce_features(passages: np.ndarray) -> np.ndarray:
    """``(n, 3)``: best, second best and mean of each row's non-NaN passage scores (0 for an all-NaN
    row; a one-passage row's second best is its best): the ``ce`` kind's :data:`CE_NAMES`."""
    valid = ~np.isnan(passages)
    count = valid.sum(axis=1)
    ordered = -np.sort(-np.where(valid, passages, -np.inf), axis=1)
    best = np.where(count > 0, ordered[:, 0], 0.0)
    second = np.where(count > 1, ordered[:, min(1, ordered.shape[1] - 1)], best)
    mean = np.where(count > 0, np.where(valid, passages, 0.0).sum(axis=1) / np.maximum(count, 1), 0.0)
    return np.column_stack([best, second, mean])


def best_windows(cut: Sequence[Sequence[str]], flat: np.ndarray) -> list[float]:
    """Each passage's best window score from the flat scores of its windows, in order (NaN: no window)."""
    best, at = [], 0
    for ws in cut:
        best.append(float(flat[at : at + len(ws)].max()) if ws else float("nan"))
        at += len(ws)
    return best


class PortableCrossEncoder:
    """The cross-encoder a portable gate names (its ``crossEncoder``: name, digest, windows, token limit,
    file names and folder), loaded for the runtime: the files must be the ones the gate was fitted with
    (their SHA-256), else one error line; ``model_dir`` overrides the folder the export recorded.
    ``threads``: :class:`OnnxRunner`'s (None: its default)."""

    def __init__(
        self, spec: Mapping[str, object], model_dir: str | Path | None = None, threads: int | None = None
    ):
        folder = Path(str(model_dir or spec.get("modelDir") or "."))
        files = [folder / str(spec["model"]), folder / str(spec["tokenizer"])]
        where = f"cross-encoder {spec['name']}"
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise CrossEncoderError(f"{where}: {', '.join(missing)} missing; pass model_dir= its folder")
        if files_sha256(files) != spec["digest"]:
            raise CrossEncoderError(
                f"{where}: the files in {folder} are not the ones the gate was fitted with "
                f"(sha256 {str(spec['digest'])[:12]}...)"
            )
        self.window, self.stride = int(spec["window"]), int(spec["stride"])  # type: ignore[call-overload]
        self.runner = OnnxRunner(files[0], files[1], threads, int(spec["maxTokens"]), 1)  # type: ignore[call-overload]

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Each passage's best window logit, in order (NaN for an empty passage)."""
        cut = [windows(p, self.window, self.stride) for p in passages]
        pairs = [(query, w) for ws in cut for w in ws]
        return best_windows(cut, self.runner.run(pairs) if pairs else np.zeros(0))

    def features(self, query: str, passages: Sequence[str]) -> dict[str, float]:
        """The ``ce`` features of a top set's passages, by name."""
        row = np.array([self.score(query, passages) or [float("nan")]])
        return dict(zip(CE_NAMES, ce_features(row)[0].tolist(), strict=True))
