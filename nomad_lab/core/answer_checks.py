"""Deterministic checks of one answer (SPEC §8.4, the reference's ``generation_metrics.ts``, per answer).

Why regexes and not a judge model: the generation tier must give the same score for the same answer on
every machine, so a correctness number can be diffed against a baseline and a flip between repeats is
the model's doing, never the grader's. Every check is a case-insensitive pattern over the answer text:
golden ``mustInclude``/``mustNotInclude`` for correctness, 10 refusal phrasings, 8 "narrating the
retrieval" phrasings, leaked reasoning tags, numbers not found in the injected context, and markdown.

The SPEC names the refusal and narration families by example; the patterns below spell each family out.
Two choices are ours and documented here: apostrophes match both ``'`` and ``’`` (small models emit the
typographic one, and the same refusal must not score differently by glyph), and word boundaries anchor
every family so "unknown" never reads as "i don't know".

Standard library only, like the rest of the pure core. Cases and aggregates over these checks are
``generation_metrics``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CLAIMED_NUMBER_MIN",
    "LEAKAGE_PATTERNS",
    "MARKDOWN_PATTERNS",
    "REFUSAL_PATTERNS",
    "THINK_TAG_PATTERN",
    "AnswerScore",
    "Patterns",
    "case_insensitive",
    "extract_numbers",
    "score_answer",
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
"""Numbers above this are claims worth checking; small counts and list positions are not."""

Patterns = Iterable[re.Pattern[str] | str]


def case_insensitive(patterns: Patterns) -> list[re.Pattern[str]]:
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
    missed = [p.pattern for p in case_insensitive(must_include) if not p.search(text)]
    forbidden = [p.pattern for p in case_insensitive(must_not_include) if p.search(text)]
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
