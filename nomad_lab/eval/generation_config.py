"""What one ``eval generation`` invocation is: its options, checked at construction, and the pinned
settings that shape an answer (:meth:`GenerationEvalConfig.answer_params`, the resume key's contents).

Why apart from the runner (:mod:`nomad_lab.eval.generation`): the CLI, a study and a test build a config
and read its defaults without the runner's backends, retrieval and store.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.reference import (
    RAG_DEFAULT_SCORE_THRESHOLD,
    RAG_DEFAULT_TOP_K,
    RAG_MIN_FINAL_SCORE,
    RAG_PLACEMENTS,
    RAG_TAIL,
)
from nomad_lab.core.samplers import RESPONSE_STYLES, style_options
from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR, DEFAULT_STORE_PATH
from nomad_lab.data.golden_suites import Golden
from nomad_lab.eval.generation_answers import GENERATION_MODES, prompts_sha
from nomad_lab.retrieval.index_spec import parse_index_spec
from nomad_lab.services.pipeline import MOCK_MODEL

DEFAULT_GENERATION_MODEL = "embedded:smollm2-135m"
GENERATION_SEED = 42
GENERATION_MIN_FINAL_SCORE = RAG_MIN_FINAL_SCORE
"""Pinned: the eval never reads a user's relevance setting."""
LONG_CONTEXT_TAG = "long-context"
LONG_CONTEXT_WINDOW = 4096


class GenerationEvalError(NomadLabError, ValueError):
    """A generation run cannot start: a bad option, no goldens selected, or the model does not answer."""


@dataclass(frozen=True)
class GenerationEvalConfig:
    """One ``eval generation`` invocation. ``modes`` run in the order given, each stored as its own run."""

    model: str = DEFAULT_GENERATION_MODEL
    tasks_model: str | None = None
    suite: str = "core"
    modes: tuple[str, ...] = ("e2e",)
    repeats: int = 3
    limit: int | None = None
    tag: str | None = None
    style: str | None = None
    context_window: int | None = None
    long_context_window: int = LONG_CONTEXT_WINDOW
    rag_placement: str = RAG_TAIL
    token_ratio: float = 1.0
    num_predict_cap: int | None = None
    read_million_sizes: bool = False
    skip_query_rewrite: bool = False
    include_distractors: bool = True
    fresh: bool = False
    embedder: str | None = None
    index: str | None = None
    corpus_dir: Path = DEFAULT_CORPUS_DIR
    goldens_dir: Path = DEFAULT_GOLDENS_DIR
    store_path: Path = DEFAULT_STORE_PATH
    report_dir: Path | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        bad = [m for m in self.modes if m not in GENERATION_MODES]
        if bad or not self.modes:
            raise GenerationEvalError(
                f"unknown mode(s) {bad or '(none)'}: expected {', '.join(GENERATION_MODES)}"
            )
        if self.style is not None and self.style not in RESPONSE_STYLES:
            raise GenerationEvalError(
                f"unknown style {self.style!r}: expected one of {', '.join(RESPONSE_STYLES)}"
            )
        if self.rag_placement not in RAG_PLACEMENTS:
            raise GenerationEvalError(
                f"rag_placement must be one of {RAG_PLACEMENTS}, got {self.rag_placement!r}"
            )
        for name in ("repeats", "limit", "context_window", "long_context_window", "num_predict_cap"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise GenerationEvalError(f"{name} must be a positive integer, got {value}")
        parse_index_spec(self.index)  # a bad spec is refused before any work
        if not self.token_ratio > 0:
            raise GenerationEvalError(f"token_ratio must be positive, got {self.token_ratio}")

    @property
    def is_mock(self) -> bool:
        return self.model == MOCK_MODEL

    def window_for(self, golden: Golden) -> int | None:
        """The pinned window for a golden: ``context_window`` for all, else the long-context window for
        long-context goldens, else None (resolved from the model)."""
        if self.context_window is not None:
            return self.context_window
        return self.long_context_window if LONG_CONTEXT_TAG in golden.tags else None

    def answer_params(self, mode: str, fingerprint: str) -> dict[str, Any]:
        """Everything that shapes an answer: the resume key is the hash of exactly this."""
        return {
            "model": self.model,
            "tasksModel": self.tasks_model,
            "mode": mode,
            "style": self.style,
            "sampling": style_options(self.style),
            "seed": GENERATION_SEED,
            "contextWindow": self.context_window,
            "longContextWindow": self.long_context_window,
            "ragPlacement": self.rag_placement,
            "tokenRatio": self.token_ratio,
            "numPredictCap": self.num_predict_cap,
            "readMillionSizes": self.read_million_sizes,
            "skipQueryRewrite": self.is_mock or self.skip_query_rewrite,
            "topK": RAG_DEFAULT_TOP_K,
            "scoreThreshold": RAG_DEFAULT_SCORE_THRESHOLD,
            "minFinalScore": GENERATION_MIN_FINAL_SCORE,
            "relevanceCheckModel": None,
            "prompts": prompts_sha(),
            "corpusFingerprint": fingerprint,
            "includeDistractors": self.include_distractors,
            **self.index_params(),
        }

    def index_params(self) -> dict[str, Any]:
        """The index searched, when it is not exact search: absent otherwise, so that answers stored
        before ``--index`` existed keep their resume keys."""
        spec = parse_index_spec(self.index)
        return {} if spec.kind == "exact" else {"index": spec.identity()}
