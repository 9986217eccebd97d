"""Sentence units of a passage, each with its context, and a cheap lexical choice of the few a sufficiency
check reads.

Why a sentence with its context: "does a passage state the answer?" is decided by one sentence, but a
bare sentence loses what it is about ("It lasts 3 hours." names no product), so a unit is the sentence
after its section heading and the sentence before it, cut to :data:`UNIT_WORDS` words. Why a lexical
choice: reading every sentence of five passages with a cross-encoder costs about a second per question on
two cores; the units sharing the most (inverse-frequency weighted) words with the question are the ones a
containment model needs to read, and :func:`choose_units` picks :data:`CHOSEN` of them in microseconds.
How often the answer sentence survives the choice is measured (the study reports it), not assumed.

Standard library only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

__all__ = [
    "CHOSEN",
    "UNIT_WORDS",
    "choose_units",
    "content_words",
    "cutter_tables",
    "normalised",
    "passage_sentences",
    "passage_units",
    "unit_parts",
]

UNIT_WORDS = 80
"""Words per unit (heading + previous sentence + sentence): with a question, ~130 word-pieces."""
HEADING_WORDS = 12
"""A long heading (a reST title line, a book's header) is cut to its first words."""
CONTEXT_WEIGHT = 0.5
"""A question word found only in a unit's context (heading, previous sentence) counts half."""
CHOSEN = 8
"""Units a question's sufficiency score reads (the study's ``--units``)."""
_HEADING = re.compile(r"^\s*#{1,6}\s+(.+?)\s*#*\s*$")
_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")
_FUNCTION_WORDS = (
    "a an the and or but if of to in on at for by with from as is are was were be been being do does did "
    "can could should would will shall may might must i me my we our you your it its this that these those "
    "there here what which who whom whose when where why how not no yes so than then too very just about "
    "into over under after before up down out off again more most some any each all both few other such own "
    "same only also get got have has had having am"
)
_STOP = frozenset(_FUNCTION_WORDS.split())


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    for suffix in ("ing", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix) and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


_MARKUP = str.maketrans(
    {"*": " ", "`": " ", "|": " ", "#": " ", "\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'}
)


def normalised(text: str) -> str:
    """Text as a verbatim comparison reads it: lowercase, curly quotes straightened, Markdown emphasis,
    code ticks, table pipes and heading marks dropped, whitespace collapsed. A model copying a sentence
    drops the ``**`` around a figure and joins a line break; neither makes its copy less verbatim."""
    return " ".join(text.translate(_MARKUP).lower().split())


def content_words(text: str) -> list[str]:
    """Lowercase words minus function words, crudely stemmed (plural -s, -es, -ing, -ed dropped)."""
    out = []
    for word in _WORD.findall(text.lower()):
        if word in _STOP:
            continue
        out.append(_stem(word))
    return out


def passage_sentences(text: str) -> list[tuple[str, str]]:
    """(nearest heading above, sentence) for each sentence of ``text``: Markdown headings set the
    heading, every other non-empty line (a paragraph, a list item, a table row) is split at sentence ends."""
    heading = ""
    out: list[tuple[str, str]] = []
    paragraph: list[str] = []

    def flush() -> None:
        joined = " ".join(paragraph).strip()
        paragraph.clear()
        for sentence in _END.split(joined):
            if len(_WORD.findall(sentence.lower())) >= 3:
                out.append((heading, sentence.strip()))

    fenced = False
    for line in text.splitlines():
        if line.strip().startswith(("```", "~~~")):
            fenced = not fenced
            flush()
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            flush()
            heading = match.group(1).strip()
        elif (
            not line.strip()
            or line.lstrip().startswith(("-", "*", "|", "+"))
            or re.match(r"\s*\d+[.)]\s", line)
        ):
            flush()
            if line.strip():
                paragraph.append(re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line).strip(" |"))
                flush()
        else:
            paragraph.append(line.strip())
    flush()
    return out


def _cut(words: list[str], budget: int) -> list[str]:
    return words[-budget:] if budget > 0 else []


def passage_units(text: str, words: int = UNIT_WORDS) -> list[str]:
    """Each sentence of ``text`` with its context: ``heading: previous sentence sentence``, the previous
    sentence (then the heading) cut from the front when the unit would exceed ``words`` words."""
    return [unit for unit, _ in unit_parts(text, words)]


def unit_parts(text: str, words: int = UNIT_WORDS) -> list[tuple[str, str]]:
    """(unit, its own sentence as cut) for each sentence of ``text`` (see :func:`passage_units`)."""
    sentences = passage_sentences(text)
    units = []
    for i, (heading, sentence) in enumerate(sentences):
        own = sentence.split()[:words]
        previous = sentences[i - 1][1].split() if i and sentences[i - 1][0] == heading else []
        before = _cut(previous, words - len(own))
        head = heading.split()[: min(HEADING_WORDS, max(0, words - len(own) - len(before)))]
        prefix = (" ".join(head) + ": ") if head else ""
        units.append((prefix + " ".join(before + own), " ".join(own)))
    return units


def choose_units(
    question: str, units: Sequence[str], k: int = CHOSEN, sentences: Sequence[str] | None = None
) -> list[int]:
    """Indices of the ``k`` units sharing the most question words, each word weighted by its inverse
    frequency among ``units`` (a word every unit holds says nothing), and by :data:`CONTEXT_WEIGHT` when
    only the unit's context holds it, not its own sentence (``sentences``; None: the whole unit counts):
    the sentence is what states an answer, a heading is shared by every sentence under it. Ties keep
    passage order."""
    asked = set(content_words(question))
    bags = [set(content_words(u)) for u in units]
    own = bags if sentences is None else [set(content_words(s)) for s in sentences]
    n = len(units)
    df = {w: sum(w in b for b in bags) for w in asked}
    weight = {w: math.log(1 + n / (1 + df[w])) for w in asked}
    scores = [  # summed in word order: a set's order follows the per-process string hash salt
        sum(weight[w] * (1.0 if w in mine else CONTEXT_WEIGHT) for w in sorted(asked & b))
        for b, mine in zip(bags, own, strict=True)
    ]
    order = sorted(range(n), key=lambda i: (-scores[i], i))
    return sorted(order[:k])


def cutter_tables() -> dict[str, object]:
    """This module's constants and patterns as data, for a port that must cut and choose units exactly as
    this module does (the sufficiency bundle's ``sufficiency_units.ts``): Python regex syntax."""
    return {
        "headingWords": HEADING_WORDS,
        "contextWeight": CONTEXT_WEIGHT,
        "functionWords": sorted(_STOP),
        "heading": _HEADING.pattern,
        "end": _END.pattern,
        "word": _WORD.pattern,
    }
