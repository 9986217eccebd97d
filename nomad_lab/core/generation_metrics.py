"""Deterministic generation metrics (SPEC §8.4, the reference's ``generation_metrics.ts``).

Why regexes and not a judge model: the generation tier must give the same score for the same answer on
every machine, so a correctness number can be diffed against a baseline and a flip between repeats is
the model's doing, never the grader's. Every check is a case-insensitive pattern over the answer text:
golden ``mustInclude``/``mustNotInclude`` for correctness, 10 refusal phrasings, 8 "narrating the
retrieval" phrasings, leaked reasoning tags, numbers not found in the injected context, and markdown.

The SPEC names the refusal and narration families by example; the patterns below spell each family out.
Two choices are ours and documented here: apostrophes match both ``'`` and ``’`` (small models emit the
typographic one, and the same refusal must not score differently by glyph), and word boundaries anchor
every family so "unknown" never reads as "i don't know".

Standard library only, like the rest of the pure core.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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

_A = "['\u2019]"  # straight or typographic apostrophe


def _compile_ci(*sources: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(source, re.IGNORECASE) for source in sources)


REFUSAL_PATTERNS: tuple[re.Pattern[str], ...] = _compile_ci(
    rf"\bi (?:don{_A}t|do not) (?:know|have)\b",
    rf"\bi(?:{_A}m| am) (?:not able|unable) to\b",
    rf"\bi (?:couldn{_A}t|could not|can{_A}t|cannot) find\b",
    r"\b(?:no|not enough) (?:information|details|data)\b",
    rf"\b(?:does not|doesn{_A}t) (?:contain|mention|include|provide|specify|say|state|cover)\b",
    rf"\b(?:isn{_A}t|is not) (?:mentioned|specified|covered|available|provided)\b",
    r"\bnot (?:mentioned|specified|covered|stated|documented)\b",
    r"\bunable to (?:answer|determine|find)\b",
    rf"\bthere(?: is|{_A}s) no (?:information|mention|record)\b",
    rf"\bi(?:{_A}d| would) need more\b",
)
"""The 10 refusal families: any match means the answer declined (SPEC §8.4)."""

LEAKAGE_PATTERNS: tuple[re.Pattern[str], ...] = _compile_ci(
    r"\b(?:according to|based on|per|from) the (?:provided |retrieved |given |supplied )?context\b",
    r"\bcontext \d+",
    r"\bthe knowledge ?base\b",
    r"\bthe (?:provided|retrieved|supplied|given) (?:documents?|passages?|excerpts?|text)\b",
    rf"\bthe context (?:does not|doesn{_A}t|is|was|seems|appears)\b",
    r"\b(?:in|from) the (?:documents?|passages?) (?:provided|above|below)\b",
    r"\b(?:no|any|specific|relevant) context\b",
    r"\bsearch results?\b",
)
"""The 8 narration families: the answer talks about the retrieval instead of answering (rule 3 of the
RAG prompt). ``leakage`` lists the pattern sources that matched."""

THINK_TAG_PATTERN = re.compile(r"</?(think|thought|thinking|reasoning)\b[^>]*>", re.IGNORECASE)
"""Broader than the stream normalizer (which splits only exact ``<think>``): catches any reasoning tag
that survived into the visible answer."""

MARKDOWN_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"^#{1,6}\s+\S", re.MULTILINE),  # header
    re.compile(r"^\s*[-*+]\s+\S", re.MULTILINE),  # bullet
    re.compile(r"^\s*\d+[.)]\s+\S", re.MULTILINE),  # numbered list
    re.compile(r"\*\*[^*\n]+\*\*"),  # **bold**
    re.compile(r"`[^`\n]+`"),  # `code` (fences contain it too)
    re.compile(r"^\s*\|.*\|\s*$", re.MULTILINE),  # table row
)

NUMBER_PATTERN = re.compile(r"\d[\d,]*(?:\.\d+)?")
CLAIMED_NUMBER_MIN = 10
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
"""Numbers above this are claims worth checking; small counts and list positions are not."""

Patterns = Iterable[re.Pattern[str] | str]


def _case_insensitive(patterns: Patterns) -> list[re.Pattern[str]]:
    """Golden patterns as case-insensitive regexes, whether given as strings or compiled without the flag."""
    compiled = []
    for pattern in patterns:
        if isinstance(pattern, str):
            compiled.append(re.compile(pattern, re.IGNORECASE))
        elif not pattern.flags & re.IGNORECASE:
            compiled.append(re.compile(pattern.pattern, pattern.flags | re.IGNORECASE))
        else:
            compiled.append(pattern)
    return compiled


def extract_numbers(text: str) -> list[str]:
    """Numbers in ``text``, commas removed and a trailing ``.0…`` dropped ("1,150.00" → "1150"), deduped
    in first-seen order."""
    seen: dict[str, None] = {}
    for match in NUMBER_PATTERN.finditer(text or ""):
        number = re.sub(r"\.0+$", "", match.group().replace(",", ""))
        seen.setdefault(number, None)
    return list(seen)


@dataclass(frozen=True)
class AnswerScore:
    """One answer's deterministic scores (``scoreAnswer``)."""

    correct: bool
    refused: bool
    refusal_correct: bool
    leakage: list[str]
    think_tag_leak: bool
    numeric_groundedness: float | None
    ungrounded_numbers: list[str]
    markdown_formatted: bool
    length: int
    missed_required: list[str] = field(default_factory=list)
    hit_forbidden: list[str] = field(default_factory=list)

    @property
    def leakage_free(self) -> bool:
        return not self.leakage

    def to_reference(self) -> dict[str, Any]:
        return {
            "correct": self.correct,
            "refused": self.refused,
            "refusalCorrect": self.refusal_correct,
            "leakage": list(self.leakage),
            "thinkTagLeak": self.think_tag_leak,
            "numericGroundedness": self.numeric_groundedness,
            "ungroundedNumbers": list(self.ungrounded_numbers),
            "markdownFormatted": self.markdown_formatted,
            "length": self.length,
            "missedRequired": list(self.missed_required),
            "hitForbidden": list(self.hit_forbidden),
        }


def score_answer(
    answer: str,
    *,
    must_include: Patterns = (),
    must_not_include: Patterns = (),
    expect_refusal: bool = False,
    context: str = "",
) -> AnswerScore:
    """Score one answer against its golden and the context text that was injected for it.

    ``correct``: every ``must_include`` matches and no ``must_not_include`` does (``re.search``, case
    insensitive; empty lists are trivially correct). ``numeric_groundedness``: the share of the answer's
    numbers above 10 that also occur in ``context`` (None when the answer claims none).
    """
    text = answer or ""
    missed = [p.pattern for p in _case_insensitive(must_include) if not p.search(text)]
    forbidden = [p.pattern for p in _case_insensitive(must_not_include) if p.search(text)]
    refused = any(p.search(text) for p in REFUSAL_PATTERNS)
    claimed = [n for n in extract_numbers(text) if float(n) > CLAIMED_NUMBER_MIN]
    available = set(extract_numbers(context))
    ungrounded = [n for n in claimed if n not in available]
    return AnswerScore(
        correct=not missed and not forbidden,
        refused=refused,
        refusal_correct=refused if expect_refusal else not refused,
        leakage=[p.pattern for p in LEAKAGE_PATTERNS if p.search(text)],
        think_tag_leak=THINK_TAG_PATTERN.search(text) is not None,
        numeric_groundedness=(len(claimed) - len(ungrounded)) / len(claimed) if claimed else None,
        ungrounded_numbers=ungrounded,
        markdown_formatted=any(p.search(text) for p in MARKDOWN_PATTERNS),
        length=len(text),
        missed_required=missed,
        hit_forbidden=forbidden,
    )


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
    include, exclude = _case_insensitive(must_include), _case_insensitive(must_not_include)
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
