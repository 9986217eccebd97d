"""Deterministic generation metrics (SPEC §8.4–8.5): a golden's repeats scored into a case, cases into
aggregates.

Why regexes and not a judge model: the generation tier must give the same score for the same answer on
every machine, so a correctness number can be diffed against a baseline and a flip between repeats is
the model's doing, never the grader's. The per-answer checks (refusal, narration, think tags, numbers,
markdown) are ``answer_checks``, re-exported here. Standard library only, like the rest of the pure core.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nomad_lab.core.answer_checks import (
    LEAKAGE_PATTERNS,
    MARKDOWN_PATTERNS,
    REFUSAL_PATTERNS,
    THINK_TAG_PATTERN,
    AnswerScore,
    Patterns,
    case_insensitive,
    extract_numbers,
    score_answer,
)

__all__ = [
    "BUDGET_FIELDS",
    "GENERATION_METRIC_NAMES",
    "LEAKAGE_PATTERNS",
    "MARKDOWN_PATTERNS",
    "REFUSAL_PATTERNS",
    "THINK_TAG_PATTERN",
    "AnswerScore",
    "GenerationAggregate",
    "GenerationCase",
    "RepeatStats",
    "aggregate_by_tag",
    "aggregate_generation",
    "build_case",
    "extract_numbers",
    "prompt_token_error",
    "score_answer",
    "summarize_numeric",
]

GENERATION_METRIC_NAMES = (
    "correctness",
    "refusalCorrectness",
    "leakageRate",
    "thinkTagLeakRate",
    "markdownRate",
    "groundedness",
    "historyElidedRate",
    "chunksDroppedRate",
    "promptTokenError",
    "meanPromptTokens",
)
"""The report's generation metrics (SPEC §8.5), in the reference's order."""


@dataclass(frozen=True)
class RepeatStats:
    """One check over a case's repeats; ``unstable`` means it flipped (some but not all repeats passed)."""

    passes: int
    repeats: int

    @property
    def pass_rate(self) -> float:
        return self.passes / self.repeats if self.repeats else 0.0

    @property
    def unstable(self) -> bool:
        return self.repeats > 1 and 0 < self.passes < self.repeats

    @classmethod
    def of(cls, outcomes: Sequence[bool]) -> RepeatStats:
        return cls(sum(1 for ok in outcomes if ok), len(outcomes))

    def to_reference(self) -> dict[str, Any]:
        return {
            "passes": self.passes,
            "repeats": self.repeats,
            "passRate": self.pass_rate,
            "unstable": self.unstable,
        }


def summarize_numeric(values: Iterable[float | None]) -> dict[str, float | int] | None:
    """``{mean, stddev (population), n}`` over the non-null values; None when there are none."""
    present = [float(v) for v in values if v is not None and not math.isnan(v)]
    if not present:
        return None
    mean = sum(present) / len(present)
    variance = sum((v - mean) ** 2 for v in present) / len(present)
    return {"mean": mean, "stddev": math.sqrt(variance), "n": len(present)}


def prompt_token_error(prompt_tokens: int | None, uncalibrated_prompt_tokens: int | None) -> float | None:
    """SPEC §3.4: ``|real − uncalibrated estimate| / real``; None without a real count."""
    if not prompt_tokens or prompt_tokens <= 0 or uncalibrated_prompt_tokens is None:
        return None
    return abs(prompt_tokens - uncalibrated_prompt_tokens) / prompt_tokens


BUDGET_FIELDS = (
    "contextWindow",
    "estimatedPromptTokens",
    "promptBudget",
    "turnsDropped",
    "chunksDropped",
    "historyElided",
    "queryTruncated",
)
"""The case ``budget`` keys (a subset of the planner's BudgetTrace, reference camelCase)."""


@dataclass(frozen=True)
class GenerationCase:
    """One golden over its repeats: answers, scores, the repeat statistics and the budget of the last one."""

    id: str
    tags: tuple[str, ...]
    expect_refusal: bool
    answers: list[str]
    scores: list[AnswerScore]
    budget: dict[str, Any] | None = None
    prompt_token_error: float | None = None
    retrieved_doc_ids: list[str | None] = field(default_factory=list)
    injected_chunks: int = 0
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def correctness(self) -> RepeatStats:
        return RepeatStats.of([s.correct for s in self.scores])

    @property
    def refusal_correctness(self) -> RepeatStats:
        return RepeatStats.of([s.refusal_correct for s in self.scores])

    @property
    def leakage_free(self) -> RepeatStats:
        return RepeatStats.of([s.leakage_free for s in self.scores])

    @property
    def groundedness(self) -> dict[str, float | int] | None:
        return summarize_numeric(s.numeric_groundedness for s in self.scores)

    def to_reference(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "tags": list(self.tags),
            "expectRefusal": self.expect_refusal,
            "correctness": self.correctness.to_reference(),
            "refusalCorrectness": self.refusal_correctness.to_reference(),
            "leakageFree": self.leakage_free.to_reference(),
            "groundedness": self.groundedness,
            "budget": self.budget,
            "promptTokenError": self.prompt_token_error,
            "retrievedDocIds": list(self.retrieved_doc_ids),
            "injectedChunks": self.injected_chunks,
            "answers": list(self.answers),
            "scores": [s.to_reference() for s in self.scores],
            **self.extra,
        }
        if self.error is not None:
            out["error"] = self.error
        return out


def build_case(
    id: str,
    tags: Sequence[str],
    expect_refusal: bool,
    answers: Sequence[str],
    contexts: Sequence[str],
    *,
    must_include: Patterns = (),
    must_not_include: Patterns = (),
    budget: Mapping[str, Any] | None = None,
    prompt_token_error: float | None = None,
    retrieved_doc_ids: Sequence[str | None] = (),
    injected_chunks: int = 0,
    error: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> GenerationCase:
    """Score each answer against the context injected for it (``contexts[i]`` goes with ``answers[i]``)."""
    include, exclude = case_insensitive(must_include), case_insensitive(must_not_include)
    scores = [
        score_answer(
            answer,
            must_include=include,
            must_not_include=exclude,
            expect_refusal=expect_refusal,
            context=context,
        )
        for answer, context in zip(answers, contexts, strict=True)
    ]
    return GenerationCase(
        id=id,
        tags=tuple(tags),
        expect_refusal=expect_refusal,
        answers=list(answers),
        scores=scores,
        budget=None if budget is None else {key: budget.get(key) for key in BUDGET_FIELDS},
        prompt_token_error=prompt_token_error,
        retrieved_doc_ids=list(retrieved_doc_ids),
        injected_chunks=injected_chunks,
        error=error,
        extra=dict(extra or {}),
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _rate(flags: Sequence[bool]) -> float | None:
    return sum(1 for f in flags if f) / len(flags) if flags else None


@dataclass(frozen=True)
class GenerationAggregate:
    """``aggregateGeneration``: rates over cases that have at least one score, unless noted."""

    cases: int
    unstable: int
    errors: int
    correctness: float | None
    refusal_correctness: float | None
    leakage_rate: float | None
    think_tag_leak_rate: float | None
    markdown_rate: float | None
    groundedness: dict[str, float | int] | None
    mean_answer_length: float | None
    history_elided_rate: float | None
    chunks_dropped_rate: float | None
    prompt_token_error: dict[str, float | int] | None
    mean_prompt_tokens: float | None

    def metrics(self) -> dict[str, float | None]:
        """The report's ``metrics`` object (SPEC §8.5 generation names)."""
        return {
            "correctness": self.correctness,
            "refusalCorrectness": self.refusal_correctness,
            "leakageRate": self.leakage_rate,
            "thinkTagLeakRate": self.think_tag_leak_rate,
            "markdownRate": self.markdown_rate,
            "groundedness": None if self.groundedness is None else float(self.groundedness["mean"]),
            "historyElidedRate": self.history_elided_rate,
            "chunksDroppedRate": self.chunks_dropped_rate,
            "promptTokenError": (
                None if self.prompt_token_error is None else float(self.prompt_token_error["mean"])
            ),
            "meanPromptTokens": self.mean_prompt_tokens,
        }

    def to_reference(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "unstable": self.unstable,
            "errors": self.errors,
            "correctness": self.correctness,
            "refusalCorrectness": self.refusal_correctness,
            "leakageRate": self.leakage_rate,
            "thinkTagLeakRate": self.think_tag_leak_rate,
            "markdownRate": self.markdown_rate,
            "groundedness": self.groundedness,
            "meanAnswerLength": self.mean_answer_length,
            "historyElidedRate": self.history_elided_rate,
            "chunksDroppedRate": self.chunks_dropped_rate,
            "promptTokenError": self.prompt_token_error,
            "meanPromptTokens": self.mean_prompt_tokens,
        }


def aggregate_generation(cases: Sequence[GenerationCase]) -> GenerationAggregate:
    """Means of per-case pass rates; per-answer rates over every individual answer; budget shares over
    the cases that carry a budget; ``promptTokenError`` over the cases that have one."""
    scored = [c for c in cases if c.scores]
    answers = [s for c in scored for s in c.scores]
    budgets = [c.budget for c in cases if c.budget is not None]
    prompt_tokens = [
        float(b["estimatedPromptTokens"]) for b in budgets if b.get("estimatedPromptTokens") is not None
    ]
    return GenerationAggregate(
        cases=len(cases),
        unstable=sum(1 for c in scored if c.correctness.unstable),
        errors=sum(1 for c in cases if c.error is not None),
        correctness=_mean([c.correctness.pass_rate for c in scored]),
        refusal_correctness=_mean([c.refusal_correctness.pass_rate for c in scored]),
        leakage_rate=_rate([not s.leakage_free for s in answers]),
        think_tag_leak_rate=_rate([s.think_tag_leak for s in answers]),
        markdown_rate=_rate([s.markdown_formatted for s in answers]),
        groundedness=summarize_numeric(s.numeric_groundedness for s in answers),
        mean_answer_length=_mean([float(s.length) for s in answers]),
        history_elided_rate=_rate([bool(b.get("historyElided")) for b in budgets]),
        chunks_dropped_rate=_rate([(b.get("chunksDropped") or 0) > 0 for b in budgets]),
        prompt_token_error=summarize_numeric(c.prompt_token_error for c in cases),
        mean_prompt_tokens=_mean(prompt_tokens),
    )


def aggregate_by_tag(cases: Sequence[GenerationCase]) -> dict[str, GenerationAggregate]:
    """The aggregate restricted to each tag's cases, tags sorted."""
    tags = sorted({tag for case in cases for tag in case.tags})
    return {tag: aggregate_generation([c for c in cases if tag in c.tags]) for tag in tags}
