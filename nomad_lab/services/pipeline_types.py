"""The pipeline's inputs and outputs: its configuration, the model-size tiers and the SPEC §5.4 trace.

Why apart from ``pipeline.run_pipeline``: every caller (the generation eval, notebooks, tests) builds a
:class:`PipelineConfig` and reads a :class:`PipelineTrace`; these shapes change far less often than the
steps that fill them, and reading them should not need the steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from nomad_lab.backends.base import Backend, BackendError, ChatResult, ModelInfo
from nomad_lab.core.context_window import (
    DEFAULT_PARAMETER_BILLIONS,
    ContextWindowResolver,
    parse_parameter_billions,
)
from nomad_lab.core.planner import BudgetTrace, camel_case
from nomad_lab.core.prompts import DEFAULT_SYSTEM_PROMPT, SUFFICIENCY_ACTIONS, SUFFICIENCY_NOTE_ACTION
from nomad_lab.core.reference import (
    RAG_DEFAULT_SCORE_THRESHOLD,
    RAG_DEFAULT_TOP_K,
    RAG_MIN_FINAL_SCORE,
    RAG_TAIL,
)
from nomad_lab.core.token_estimator import TokenCalibrator
from nomad_lab.services.model_calls import CallSink

if TYPE_CHECKING:
    from nomad_lab.gate.reference_ranking import RankedResult

__all__ = [
    "MOCK_EMPTY_ANSWER",
    "MOCK_MODEL",
    "RAG_CONTEXT_LIMITS",
    "Chunk",
    "ContextLimits",
    "Message",
    "PipelineConfig",
    "PipelineMemo",
    "PipelineResult",
    "PipelineTrace",
    "Retriever",
    "Timings",
    "context_limits_for",
    "doc_id_of",
]

MOCK_MODEL = "mock"
MOCK_EMPTY_ANSWER = "I don't have information about that."
Message = dict[str, Any]
Chunk = dict[str, Any]


@dataclass(frozen=True)
class ContextLimits:
    """A model-size tier: how many chunks may reach the planner and how many tokens the RAG block may
    take (``max_tokens``; 0 = no cap; enforced unless ``PipelineConfig.enforce_context_tokens`` is off)."""

    max_results: int
    max_tokens: int

    def to_reference(self) -> dict[str, int]:
        return {"maxResults": self.max_results, "maxTokens": self.max_tokens}


RAG_CONTEXT_LIMITS: tuple[tuple[float, ContextLimits], ...] = (
    (3.0, ContextLimits(2, 1000)),
    (8.0, ContextLimits(4, 2500)),
    (math.inf, ContextLimits(5, 0)),
)
"""(max parameter billions, limits): 1–3B, 4–8B, 13B+ (the reference's ``RAG_CONTEXT_LIMITS``)."""


def context_limits_for(
    parameter_size: str | None, model_name: str | None, *, read_millions: bool = False
) -> ContextLimits:
    """The tier for a model's size: ``parameter_size`` ("8.0B"), else a size in the name, else 8B.

    Reference quirk, kept by default: only "B" sizes parse, so a sub-billion model that reports
    "134.52M" (SmolLM2-135M, Gemma 3 270M) falls back to 8B and gets 4 chunks, not 2.
    ``read_millions=True`` (a fix, not the reference) reads "M" sizes as fractions of a billion.
    """
    billions = parse_parameter_billions(parameter_size, model_name)
    if billions is None and read_millions:
        billions = _millions(parameter_size)
    if billions is None:
        billions = DEFAULT_PARAMETER_BILLIONS
    return next(limits for ceiling, limits in RAG_CONTEXT_LIMITS if billions <= ceiling)


def _millions(parameter_size: str | None) -> float | None:
    text = (parameter_size or "").strip().upper()
    if text.endswith("M"):
        try:
            return float(text[:-1]) / 1000
        except ValueError:
            return None
    return None


class Retriever(Protocol):
    """What the pipeline needs of an index (``nomad_lab.retrieval.index.RetrievalIndex`` is one)."""

    def search(
        self, query: str, top_k: int = ..., score_threshold: float = ..., min_final_score: float = ...
    ) -> RankedResult: ...


class PipelineMemo:
    """What a process learns once per model and keeps: ``show()`` (successes only, SPEC §7.4), the
    resolved context window (once per model: a different ``num_ctx`` reloads the model), the tasks model.
    """

    def __init__(self, backend: Backend | None, resolver: ContextWindowResolver | None = None) -> None:
        self.backend = backend
        self._info: dict[str, ModelInfo] = {}
        self.resolver = resolver or ContextWindowResolver(self._show)
        self.tasks: dict[str, tuple[Backend | None, str]] = {}

    def _show(self, model: str) -> ModelInfo:
        if self.backend is None:
            raise BackendError("no-backend", f"no backend to describe {model!r}")
        if model not in self._info:
            self._info[model] = self.backend.show(model)
        return self._info[model]

    def info(self, model: str) -> ModelInfo | None:
        try:
            return self._show(model)
        except Exception:  # show is advisory: the tier and window fall back to their defaults
            return None


@dataclass
class PipelineConfig:
    """Everything one turn depends on. Reuse one config across turns: it carries the per-model memo.

    ``backend`` None is allowed only for ``model="mock"``. ``index`` None means an empty knowledge base
    (no retrieval, no rewrite). ``context_window`` None resolves through ``show()``; a number pins it.
    ``token_ratio`` None takes the calibrator's learned factor (1 without a calibrator); a number pins it.
    ``sampling`` holds ``ChatOptions`` sampler fields (see ``nomad_lab.core.samplers.style_options``).
    ``num_predict_cap`` (not the reference) caps the generation length below the planner's ``numPredict``.
    ``injected_as_planned`` (not the reference) records the chunks the planner really kept as ``injected``;
    the reference records the first ``chunksKept`` candidates, which differ when a large chunk was skipped
    and a later one fit. ``call_log`` (e.g. the workspace ``Store``) logs every model call of the turn.
    ``structured_rewrite`` (default, the reference's current form) asks the rewrite for ``{"queries"}``;
    False sends the earlier free-text rewrite. ``enforce_context_tokens`` (default, the reference's
    current behaviour) caps the RAG block at the size tier's ``maxTokens`` (1,000 up to 3B, 2,500 up to
    8B); False only records it, as the SPEC's older text says. ``estimator`` replaces the seed's
    segmenter in the planner (a ``ContentEstimator`` or ``ExactEstimator``'s ``estimate``).
    ``sufficiency_check`` (not the reference; None = off) is a second decision after the relevance
    judge: ``check(query, passages)`` says whether a passage states the answer
    (:func:`nomad_lab.retrieval.sufficiency_model.sufficiency_check`); when it says no,
    ``sufficiency_action`` keeps the passages with a note in the prompt (``note``) or drops them (``drop``);
    the default is the action ``nomad-lab study note-effect`` chose by its rule
    (``results/note_effect/note_effect.json``; a test keeps the two equal).
    """

    backend: Backend | None = None
    model: str | None = None
    index: Retriever | None = None
    tasks_backend: Backend | None = None
    tasks_model: str | None = None
    top_k: int = RAG_DEFAULT_TOP_K
    score_threshold: float = RAG_DEFAULT_SCORE_THRESHOLD
    min_final_score: float = RAG_MIN_FINAL_SCORE
    relevance_check_model: str | None = None
    judge_backend: Backend | None = None
    context_window: int | None = None
    rag_placement: str = RAG_TAIL
    calibrator: TokenCalibrator | None = None
    token_ratio: float | None = None
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    skip_query_rewrite: bool = False
    sampling: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    keep_alive: str | None = None
    num_predict_cap: int | None = None
    read_million_sizes: bool = False
    structured_rewrite: bool = True
    enforce_context_tokens: bool = True
    estimator: Callable[[str], int] | None = None
    injected_as_planned: bool = False
    call_log: CallSink | None = None
    memo: PipelineMemo | None = None
    sufficiency_check: Callable[[str, Sequence[str]], bool] | None = None
    sufficiency_action: str = SUFFICIENCY_NOTE_ACTION

    def __post_init__(self) -> None:
        if self.memo is None:
            self.memo = PipelineMemo(self.backend)
        if self.sufficiency_action not in SUFFICIENCY_ACTIONS:
            raise ValueError(
                f"PipelineConfig: sufficiency_action must be one of {', '.join(SUFFICIENCY_ACTIONS)}, "
                f"got {self.sufficiency_action!r}"
            )
        if self.backend is None and not self.is_mock:
            raise ValueError(
                f"PipelineConfig: model {self.model!r} needs a backend (only 'mock' runs without one)"
            )

    @property
    def is_mock(self) -> bool:
        return self.model == MOCK_MODEL

    @property
    def chat_model(self) -> str:
        name = self.model or (self.backend.model if self.backend is not None else None)
        if not name:
            raise ValueError("PipelineConfig: no chat model: set model= or name one in the backend spec")
        return name


@dataclass(frozen=True)
class Timings:
    rewrite_ms: float = 0.0
    retrieval_ms: float = 0.0
    relevance_check_ms: float = 0.0


@dataclass(frozen=True)
class PipelineTrace:
    """SPEC §5.4 ``PipelineTrace``, plus a few fields of ours (after ``uncalibrated_prompt_tokens``)."""

    rewritten_query: str | None
    did_rewrite: bool
    retrieved: list[Chunk]
    injected: list[Chunk]
    messages: list[Message]
    num_ctx: int
    num_predict: int
    context_limits: ContextLimits
    timings: Timings
    min_final_score: float
    chunks_below_floor: int
    relevance_check_model: str | None
    chunks_rejected_by_check: int
    budget: BudgetTrace
    uncalibrated_prompt_tokens: int
    chat_model: str = ""
    tasks_model: str | None = None
    retrieval_query: str | None = None
    rewrite_reason: str | None = None
    relevance_check_judged: bool | None = None
    context_window_source: str = "explicit"
    token_ratio: float = 1.0
    retrieval_error: str | None = None
    sufficiency: str | None = None  # None: no check; "stated", "note" or "dropped"
    sufficiency_ms: float = 0.0

    def to_reference(self) -> dict[str, Any]:
        """The trace with the reference's camelCase names (``budget`` and ``contextLimits`` nested)."""
        out = {
            camel_case(k): v
            for k, v in asdict(self).items()
            if k not in ("budget", "context_limits", "timings")
        }
        out["contextLimits"] = self.context_limits.to_reference()
        out["timings"] = {camel_case(k): v for k, v in asdict(self.timings).items()}
        out["budget"] = self.budget.to_reference()
        return out

    @property
    def injected_doc_ids(self) -> list[str | None]:
        return [doc_id_of(chunk) for chunk in self.injected]

    @property
    def retrieved_doc_ids(self) -> list[str | None]:
        return [doc_id_of(chunk) for chunk in self.retrieved]

    @property
    def context_text(self) -> str:
        """The injected chunks' text joined by blank lines: the mock's answer, and what numbers are checked
        against for groundedness."""
        return "\n\n".join(str(chunk.get("text", "")) for chunk in self.injected)


@dataclass(frozen=True)
class PipelineResult:
    answer: ChatResult
    trace: PipelineTrace


def doc_id_of(chunk: Mapping[str, Any]) -> str | None:
    """The corpus doc id a chunk came from (nomad-lab's ``metadata.doc_id``), if known."""
    metadata = chunk.get("metadata")
    return metadata.get("doc_id") if isinstance(metadata, Mapping) else None
