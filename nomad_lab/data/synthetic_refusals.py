"""Synthetic unanswerable questions made without a model, from answerable (training-fold) questions.

Why: an answerability model needs in-domain negatives that look like answerable questions, and the
goldens hold few. Two model-free recipes from the literature give most of the gain: swap the ENTITY
or the asked ATTRIBUTE of an answerable question so its passage no longer answers it (Gautam et al.
2023), and re-pair a question with a retrieved passage that lacks its answer (AGent 2023).

Everything here is general rules over the text (capitalized names, acronyms and model numbers; a fixed
lexicon of measurable attributes and of "how ..." cues), seeded and deterministic, standard library
only. :func:`swap_questions` reads only the questions it is given (the caller passes training-fold
questions); whether a swap really leaves a passage unanswering is checked per passage by
:func:`answers_swap` (the swapped-in term, or evidence of the swapped-in cue, must be absent).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Synthetic", "answers_swap", "entity_spans", "lacks_answer", "swap_questions"]

_FUNCTION_WORDS = (
    "i i'm i've i'd my me we our you your what which who whom whose when where why how is are was were "
    "do does did can could should would will shall may might must if in on at for of to the a an and or "
    "but so it its this that these those there here please hey hi ok yes no not"
)
_STOP = frozenset(_FUNCTION_WORDS.split())
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-/]*")
ATTRIBUTES = (
    "capacity", "weight", "price", "cost", "voltage", "wattage", "temperature", "length", "width",
    "height", "depth", "lifespan", "warranty", "range", "speed", "size", "color", "dose", "frequency",
    "altitude", "pressure", "thickness", "diameter", "rating", "population", "deadline", "fee",
)  # fmt: skip
"""Measurable attributes a question may ask for; a swap asks for another one instead."""
CUES = {
    "how long": r"\b\d+(?:\.\d+)?\s*(?:seconds?|minutes?|min|hours?|hrs?|days?|weeks?|months?|years?)\b",
    "how often": r"\bevery\b|\btimes? (?:a|per)\b|\bdaily\b|\bweekly\b|\bmonthly\b|\bannually\b|\bonce\b",
    "how far": r"\b\d+(?:\.\d+)?\s*(?:m|km|miles?|feet|ft|yards?|meters?|metres?)\b",
    "how fast": r"\bmph\b|\bkm/h\b|\bper (?:hour|second|minute)\b|\bknots?\b",
    "how heavy": r"\b\d+(?:\.\d+)?\s*(?:kg|g|lbs?|pounds?|ounces?|oz|grams?|kilograms?)\b",
    "how hot": r"°|\bdegrees?\b|\b\d+\s*(?:f|c)\b",
}
"""Adverbial "how ..." cues and the evidence a passage that answers one would hold."""


@dataclass(frozen=True)
class Synthetic:
    """One synthetic unanswerable question: made from ``source_id`` by replacing ``old`` with ``new``."""

    source_id: str
    text: str
    kind: str  # "entity" or "attribute"
    old: str
    new: str


def entity_spans(question: str) -> list[str]:
    """Names a question asks about: runs of capitalized words (a sentence-initial word only when the run
    is longer than one word), acronyms and model numbers (letters with digits), function words left out."""
    spans: list[str] = []
    run: list[str] = []
    tokens = list(_TOKEN.finditer(question))

    def close() -> None:
        if run:
            spans.append(" ".join(run))
            run.clear()

    for k, match in enumerate(tokens):
        word = match.group(0)
        before = question[: match.start()].rstrip()
        initial = not before or before[-1] in ".!?:\"'("
        named = word[0].isupper() and word.lower() not in _STOP
        coded = any(c.isdigit() for c in word) and any(c.isalpha() for c in word)
        acronym = len(word) >= 2 and word.isupper() and word.isalpha()
        if (named or coded or acronym) and not (
            initial and not (coded or acronym) and not _next_named(tokens, k)
        ):
            run.append(word)
        else:
            close()
    close()
    out: list[str] = []
    for span in spans:
        if span not in out and len(span) >= 2:
            out.append(span)
    return out


def _next_named(tokens: list[re.Match[str]], k: int) -> bool:
    if k + 1 >= len(tokens):
        return False
    word = tokens[k + 1].group(0)
    return word[0].isupper() and word.lower() not in _STOP


def _attribute_words(question: str) -> list[str]:
    lowered = question.lower()
    return [a for a in ATTRIBUTES if re.search(rf"\b{a}s?\b", lowered)]


def _cues(question: str) -> list[str]:
    lowered = question.lower()
    return [c for c in CUES if re.search(rf"\b{c}\b", lowered)]


def _replace(text: str, old: str, new: str) -> str:
    def keep_case(match: re.Match[str]) -> str:
        found = match.group(0)
        return new[:1].upper() + new[1:] if found[:1].isupper() and new[:1].islower() else new

    return re.sub(rf"(?<![A-Za-z0-9]){re.escape(old)}(?![A-Za-z0-9])", keep_case, text, count=1, flags=re.I)


def swap_questions(goldens: Iterable[object], seed: int, per_question: int = 2) -> list[Synthetic]:
    """Up to ``per_question`` swaps of each answerable golden (objects with ``id``, ``query`` and
    ``expect_refusal``): one entity swap (a name from ANOTHER of the given questions) and one attribute
    swap (another attribute of :data:`ATTRIBUTES`, else another cue of :data:`CUES`).

    Deterministic for the same questions and seed; refusals are skipped. Only the given questions are
    read, so a caller that passes its training fold generates nothing from held-out questions.
    """
    answerable = [g for g in goldens if not getattr(g, "expect_refusal", False) and getattr(g, "query", "")]
    names = sorted({s for g in answerable for s in entity_spans(g.query)})  # type: ignore[attr-defined]
    out: list[Synthetic] = []
    for golden in answerable:
        query: str = golden.query  # type: ignore[attr-defined]
        rng = random.Random(f"{seed}:{golden.id}")  # type: ignore[attr-defined]
        made: list[Synthetic] = []
        mine = entity_spans(query)
        if mine and names:
            old = rng.choice(mine)
            pool = [n for n in names if n.lower() not in query.lower() and old.lower() not in n.lower()]
            if pool:
                new = rng.choice(pool)
                made.append(Synthetic(golden.id, _replace(query, old, new), "entity", old, new))  # type: ignore[attr-defined]
        asked = _attribute_words(query)
        if asked:
            old = rng.choice(asked)
            new = rng.choice([a for a in ATTRIBUTES if a not in asked])
            made.append(Synthetic(golden.id, _replace(query, old, new), "attribute", old, new))  # type: ignore[attr-defined]
        elif cues := _cues(query):
            old = rng.choice(cues)
            new = rng.choice([c for c in CUES if c not in cues])
            made.append(Synthetic(golden.id, _replace(query, old, new), "attribute", old, new))  # type: ignore[attr-defined]
        out += [m for m in made if m.text != query][:per_question]
    return out


def answers_swap(swap: Synthetic, passage: str) -> bool:
    """Whether ``passage`` may still answer the swapped question: it names the swapped-in entity or
    attribute, or (for a swapped-in "how ..." cue) holds the kind of value that cue asks for."""
    lowered = passage.lower()
    if swap.new in CUES:
        return re.search(CUES[swap.new], lowered) is not None
    return re.search(rf"(?<![a-z0-9]){re.escape(swap.new.lower())}", lowered) is not None


def lacks_answer(
    passage: str, doc_id: str | None, relevant: Sequence[str], must_include: Sequence[re.Pattern[str]]
) -> bool:
    """Whether a retrieved passage lacks a question's answer: from none of its relevant documents and
    matching none of its required answer patterns (the re-pairing negatives)."""
    if doc_id is not None and doc_id in relevant:
        return False
    return not any(p.search(passage) for p in must_include)
