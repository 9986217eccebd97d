"""The generic out-of-scope bank: questions no document library should answer, kept as extra negatives.

Why: a corpus's own goldens often hold few refusal questions, and a gate learned from them needs negatives of
every kind people actually type (chit-chat, instructions, trivia, code, gibberish, personal questions,
injection attempts, other domains). The bank is ordinary golden JSONL, so it loads with the golden parser
(every error names ``<file>:<line>``) and is retrieved like any suite under the name ``bank``
(see :data:`nomad_lab.data.golden_suites.BANK_SUITE`).

Disjointness from a user's goldens is checked, never assumed: :func:`near_duplicates` finds pairs whose
normalized text is equal or whose word sets overlap with Jaccard >= :data:`NEAR_DUPLICATE_JACCARD`, and
:func:`drop_near_duplicates` removes such bank questions before they are used as negatives, so a gate is
never scored on a question it also saw labelled the other way.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

from nomad_lab.core.workspace import DEFAULT_BANK_PATH
from nomad_lab.data.golden_suites import Golden, GoldenError, load_suite_file

__all__ = [
    "DEFAULT_BANK_PATH",
    "NEAR_DUPLICATE_JACCARD",
    "OFF_TOPIC_TAG",
    "NearDuplicateIndex",
    "bank_category",
    "drop_near_duplicates",
    "load_bank",
    "near_duplicates",
    "normalized_query",
]

OFF_TOPIC_TAG = "off-topic"
NEAR_DUPLICATE_JACCARD = 0.8
_WORD = re.compile(r"\w+")
_NOT_WORD = re.compile(r"[^\w\s]")


def bank_category(golden: Golden) -> str:
    """The question's category: its one tag besides ``off-topic`` (``load_bank`` guarantees there is one)."""
    return next(tag for tag in golden.tags if tag != OFF_TOPIC_TAG)


def _tag_problem(golden: Golden) -> str | None:
    categories = [tag for tag in golden.tags if tag != OFF_TOPIC_TAG]
    if OFF_TOPIC_TAG not in golden.tags or len(categories) != 1:
        return f"field 'tags' must hold 'off-topic' and exactly one category, got {list(golden.tags)}"
    return None


def load_bank(path: str | Path | None = None, categories: Iterable[str] | None = None) -> list[Golden]:
    """The bank's questions (``Golden`` records, suite ``bank``), optionally only some ``categories``.

    ``path`` defaults to :data:`DEFAULT_BANK_PATH`. Raises :class:`GoldenError` naming ``<file>:<line>`` for
    a line the golden parser rejects, a question not marked ``expectRefusal``, or tags without exactly one
    category; and naming the file for an unknown category.
    """
    file = Path(path) if path is not None else DEFAULT_BANK_PATH
    goldens = load_suite_file(file)
    errors = [
        f"{g.location}: bank question {g.id!r} has expectRefusal false (the bank holds only refusals)"
        for g in goldens
        if not g.expect_refusal
    ]
    errors += [f"{g.location}: {problem}" for g in goldens if (problem := _tag_problem(g))]
    if errors:
        raise GoldenError(errors)
    if categories is None:
        return goldens
    wanted = list(dict.fromkeys(categories))
    known = sorted({bank_category(g) for g in goldens})
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise GoldenError(
            [f"{file}: unknown bank category {name!r} (available: {', '.join(known)})" for name in unknown]
        )
    return [g for g in goldens if bank_category(g) in wanted]


def normalized_query(text: str) -> str:
    """NFKC, case-folded, punctuation dropped, whitespace collapsed; all-symbol text (emoji) kept as is."""
    folded = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return " ".join(_NOT_WORD.sub(" ", folded).split()) or folded


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def near_duplicates(
    bank: Sequence[Golden], others: Sequence[Golden] | None = None, threshold: float = NEAR_DUPLICATE_JACCARD
) -> list[tuple[Golden, Golden, str]]:
    """``(bank question, other, why)`` for every pair that is the same or nearly the same question.

    Same means equal :func:`normalized_query`; nearly the same means word-set Jaccard >= ``threshold``.
    With ``others`` omitted, pairs within ``bank`` are checked (each pair once).
    """
    keyed = _keys(bank)
    if others is None:
        pairs = ((a, b) for i, a in enumerate(keyed) for b in keyed[i + 1 :])
    else:
        other_keys = _keys(others)
        pairs = ((a, b) for a in keyed for b in other_keys)
    found = []
    for (golden, text, words), (other, other_text, other_words) in pairs:
        if text == other_text:
            found.append((golden, other, "same normalized text"))
        elif (score := _jaccard(words, other_words)) >= threshold:
            found.append((golden, other, f"word Jaccard {score:.2f}"))
    return found


def _keys(goldens: Sequence[Golden]) -> list[tuple[Golden, str, frozenset[str]]]:
    normalized = [(g, normalized_query(g.query)) for g in goldens]
    return [(g, text, frozenset(_WORD.findall(text))) for g, text in normalized]


def drop_near_duplicates(bank: Sequence[Golden], goldens: Sequence[Golden]) -> list[Golden]:
    """The bank without any question that equals or nearly repeats one of ``goldens`` (see module doc)."""
    clashing = {id(pair[0]) for pair in near_duplicates(bank, goldens)}
    return [g for g in bank if id(g) not in clashing]


class NearDuplicateIndex:
    """The :func:`near_duplicates` rules for a stream of questions, without comparing every pair.

    Why: a drafted library yields tens of thousands of candidates, and pairwise checks grow with their
    square. Each question's words are sorted in one fixed order and only a prefix of them is indexed:
    two sets with Jaccard >= t share at least ``ceil(t * size)`` words, so they share one of the first
    ``size - ceil(t * size) + 1`` of each (prefix filtering); candidates found that way are then checked
    with the exact rule, so the answer is the same as :func:`near_duplicates` would give.
    """

    def __init__(self, threshold: float = NEAR_DUPLICATE_JACCARD) -> None:
        self.threshold = threshold
        self._texts: dict[str, str] = {}
        self._entries: list[tuple[str, frozenset[str]]] = []
        self._postings: dict[str, list[int]] = {}

    def _prefix(self, words: frozenset[str]) -> list[str]:
        ordered = sorted(words)
        return ordered[: len(ordered) - math.ceil(self.threshold * len(ordered) - 1e-9) + 1]

    def clash(self, query: str) -> tuple[str, str] | None:
        """``(label of the question it repeats, why)``, or None when ``query`` is new."""
        text = normalized_query(query)
        if text in self._texts:
            return self._texts[text], "same normalized text"
        words = frozenset(_WORD.findall(text))
        seen: set[int] = set()
        for word in self._prefix(words):
            for index in self._postings.get(word, ()):
                if index in seen:
                    continue
                seen.add(index)
                label, other = self._entries[index]
                if (score := _jaccard(words, other)) >= self.threshold:
                    return label, f"word Jaccard {score:.2f}"
        return None

    def add(self, query: str, label: str) -> None:
        """Remember ``query`` under ``label`` (its id, say) for later :meth:`clash` calls."""
        text = normalized_query(query)
        self._texts.setdefault(text, label)
        words = frozenset(_WORD.findall(text))
        self._entries.append((label, words))
        for word in self._prefix(words):
            self._postings.setdefault(word, []).append(len(self._entries) - 1)
