"""The forms a drafted answerable question may take, and the forms retired because people rejected them.

Why one module: a draft form is a promise about what a person labelling will read, and the forms people
threw away were spread over the text rules, so a retired form could come back through another template.
Here every form that still drafts is a function, and every retired one is listed in :data:`RETIRED`
(a pattern a drafted question must never match) or checked by :func:`context_free`, with why it went.

Forms that draft (each general English, none tuned to a golden):

- a heading that already asks (``How close is the storm?``), a ``How to``/``When to`` heading asked
  (``How to purify water`` -> ``How do I purify water?``), and a heading naming parts of something
  asked for them (``Signs of a possible fracture`` -> ``What are the signs of a possible fracture?``);
- a definition ``X is a ...`` -> ``What is X?``, when X is a name or a phrase that stands on its own;
- a modal ``X should Y`` -> ``Should X Y?``;
- an amount asked back (``Keep jars covered by how many inches of water?``), when the question names
  what the document is about (:func:`anchored`);
- the cloze form (``... are called what?``), for containment training (never drafted for a person).

Retired, from blind ratings of drafts on the default corpus and on a library nobody tuned the drafter on
(issue 43: 11% and 10 of 30 kept as written):

- ``What does the TITLE documentation say about HEADING?`` and ``What does TITLE say about HEADING?``:
  a heading pasted into a frame nobody types; the heading is rarely a topic ("say about method");
- ``Tell me about HEADING in TITLE.``: the same paste, as a request, often not English
  ("Tell me about recognise life-threatening bleeding in ...");
- ``TITLE: how does HEADING work?``: most headings are not mechanisms ("how do temperatures work?");
- context-free gaps: an amount asked of a clause that does not say what it is about ("Charging from
  empty takes roughly how many hours?" -- charging what?): a gap must share a word with the document's
  title or name one of its entities;
- an editorial note in a title ("Walden (excerpt)"): the note is the file's, not the thing's name;
- a one-word definition of a common word ("What is boiling?", "What is heat?"), a definite or
  pointing one ("What is the antenna?", "What is another helpful tool?": the sentence's "the" points
  back at something the question cannot see), and an activity asked as a thing ("What is storing water
  ahead of time?");
- a ``When to``/``How to`` heading with one word after it ("When should I stop?"): stop what?
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from nomad_lab.data.draft_text import EDITORIAL, NOT_SUBJECT, DocText, entities
from nomad_lab.data.sentence_units import content_words

__all__ = [
    "RETIRED",
    "Retired",
    "anchored",
    "cloze_question",
    "context_free",
    "definition_question",
    "drafted_questions",
    "heading_question",
    "modal_question",
    "quantity_question",
    "retired_form",
    "sentence_questions",
    "sourced_questions",
]


@dataclass(frozen=True)
class Retired:
    """A draft form people rejected: its name, a pattern any question of that form matches, and why."""

    name: str
    pattern: re.Pattern[str]
    why: str


RETIRED: tuple[Retired, ...] = (
    Retired(
        "documentation say about",
        re.compile(r"^What does .+ say about .+\?$"),
        "a heading pasted into a frame nobody types",
    ),
    Retired("tell me about ... in ...", re.compile(r"^Tell me about .+ in .+\.$"), "a pasted heading"),
    Retired(
        "TITLE: how does ... work?",
        re.compile(r"^[^?]+: how (?:do|does) .+ work\?$", re.IGNORECASE),
        "most headings are not mechanisms",
    ),
    Retired("editorial note in a title", EDITORIAL, "the file's note, not a name"),
    Retired(
        "one-word definition",
        re.compile(r"^What (?:is|are) [a-z][\w'-]*\?$"),
        "a common word asked bare ('What is boiling?')",
    ),
    Retired(
        "gerund definition",
        re.compile(r"^What (?:is|are) [a-z]{4,}ing\b"),
        "an activity asked as a thing ('What is storing water ahead of time?')",
    ),
    Retired(
        "pointing definition",
        re.compile(
            r"^What (?:is|are) (?:the [\w'-]+|(?:the )?(?:another|other|first|second|next|last|following|"
            r"same|latter|former|main|above|below|every)\b.*)\?$",
            re.IGNORECASE,
        ),
        "'the' points back at something the question cannot see",
    ),
)


def retired_form(question: str) -> str | None:
    """The name of the retired form ``question`` takes, or None."""
    return next((r.name for r in RETIRED if r.pattern.search(question)), None)


def _stems(text: str) -> set[str]:
    """Content words of ``text`` stemmed and cut to five letters (``charging``/``charge`` meet,
    ``burns``/``burn`` too)."""
    return {w[:5] for w in content_words(text) if len(w) >= 4}


def anchored(question: str, doc: DocText) -> bool:
    """Whether ``question`` says what it is about: it shares a content word with the document's title
    or one of its named entities, so a reader who sees only the question knows what is asked of."""
    about = _stems(doc.title) | {s for name in entities(doc)[:12] for s in _stems(name)}
    return bool(_stems(question) & about)


_GAP = re.compile(r"\b(?:how many|what percent)\b|\bwhat\?$")


def context_free(question: str, doc: DocText) -> bool:
    """A gap question (an amount or an object asked back) that does not say what it is about."""
    return bool(_GAP.search(question)) and not anchored(question, doc)


def _lower_first(text: str) -> str:
    """Lowercase a sentence-initial capital, unless the word is a name (an acronym, a capital inside it,
    or one of a run of capitalized words such as ``Cedar Valley Emergency Net``); an article always."""
    first, *rest = text.split(" ")
    if first in ("A", "An", "The"):
        return text[:1].lower() + text[1:]
    name = first.isupper() or any(c.isupper() for c in first[1:]) or bool(rest and rest[0][:1].isupper())
    return text if name else text[:1].lower() + text[1:]


_ASK_HOW = {"how": "How do I", "when": "When should I", "where": "Where should I", "whether": "Should I"}
_HOW_TO = re.compile(r"^(how|when|where|whether) to\s+(?P<rest>[a-z][\w'() ,-]+)$", re.IGNORECASE)
_PARTS_OF = re.compile(r"^(?P<head>[A-Z]?[a-z]+[^s\W]s)\s+(?:of|for|to)\s+[\w'-]", re.UNICODE)


def heading_question(doc: DocText, heading: str) -> str | None:
    """A section's heading as a reader asks it: a heading that asks already, a ``How to``/``When to``
    heading, or a plural naming parts of something; None for any other heading (see the module doc:
    pasting a heading into a frame is retired)."""
    if heading.endswith("?") and heading[:1].isupper():
        return heading
    if match := _HOW_TO.match(heading):
        rest = match.group("rest").strip()  # "When to stop" asks nothing a reader can place: stop what?
        return f"{_ASK_HOW[match.group(1).lower()]} {rest}?" if len(rest.split()) >= 2 else None
    if (match := _PARTS_OF.match(heading)) and match.group("head").lower() not in NOT_SUBJECT:
        return f"What are the {_lower_first(heading)}?"
    return None


_DEFINITION = re.compile(
    r"^(?:(?:The|A|An)\s+)?(?P<subj>[A-Za-z][\w'-]*(?:\s+[\w'-]+){0,4}?)\s+(?P<verb>is|are|means|refers to)"
    r"\s+(?:a|an|the|one|used|called|any|how|what|when|where|not)\b"
)
_POINTING = frozenset((
    "another", "other", "first", "second", "next", "last", "following", "same", "latter", "former", "main",
    "above", "below", "every",
))  # fmt: skip
_GERUND = re.compile(r"^[A-Za-z]{4,}ing$")
"""A subject opening with a verb's -ing form ("Storing water ahead of time is ...") names an activity;
"What is storing water ahead of time?" is not a question anyone asks."""


def definition_question(sentence: str) -> str | None:
    """``X is a ...`` -> ``What is X?`` (``are`` for plurals), when X is a short noun phrase that stands
    on its own: not one common word bare, not "the X" of one word, not "another X"."""
    match = _DEFINITION.match(sentence)
    if not match:
        return None
    subject_words = match.group("subj").split()
    first = subject_words[0]
    if first.lower() in NOT_SUBJECT | _POINTING | {"how", "why", "whether"} or _GERUND.match(first):
        return None
    article = next((a.lower() + " " for a in ("The", "A", "An") if sentence.startswith(a + " ")), "")
    one = len(subject_words) == 1
    is_name = first.isupper() or any(c.isupper() or c.isdigit() for c in first[1:])
    if one and ((not article and not is_name) or article == "the "):
        return None
    verb = "are" if match.group("verb") == "are" else "is"
    return f"What {verb} {article}{_lower_first(match.group('subj'))}?"


_MODAL = re.compile(
    r"^(?P<subj>[A-Z][\w'-]*(?:\s+[\w'-]+){0,4}?)\s+(?P<modal>should|must|can|cannot|can't|will|may)"
    r"\s+(?:not\s+)?(?P<rest>[a-z][^,;:()]{8,90}?)[.,;:]"
)


def modal_question(sentence: str) -> str | None:
    """``X should do Y.`` -> ``Should X do Y?``; ``You`` becomes ``I``; a negation is dropped, so the
    question asks rather than presupposes the answer."""
    match = _MODAL.match(sentence)
    if not match or match.group("subj").split()[0].lower() in (NOT_SUBJECT - {"you"}) | {"how", "why"}:
        return None
    modal = {"cannot": "can", "can't": "can", "may": "can"}.get(match.group("modal"), match.group("modal"))
    subject = match.group("subj")
    subject = "I" if subject.lower() == "you" else _lower_first(subject)
    rest = match.group("rest").strip()
    for you, me in (
        ("you're", "I'm"),
        ("you are", "I am"),
        ("yourself", "myself"),
        ("your", "my"),
        ("you", "me"),
    ):
        rest = re.sub(rf"\b{you}\b", me, rest)
    return f"{modal.capitalize()} {subject} {rest}?"


_QUANTITY = re.compile(
    r"\b\d[\d,.]*\s?(?P<unit>seconds?|minutes?|hours?|days?|weeks?|months?|years?|litres?|liters?|"
    r"gallons?|metres?|meters?|feet|foot|inches|inch|miles?|kilometres?|kilometers?|km|cm|mm|kg|g|lbs?|"
    r"pounds?|ounces?|oz|percent|%|degrees?|°[CF]|watts?|volts?|amps?|mhz|khz|ghz|bytes?|kb|mb|gb)\b",
    re.IGNORECASE,
)
_UNIT_NAMES = {
    "°c": "degrees Celsius", "°f": "degrees Fahrenheit", "foot": "feet", "inch": "inches", "km": "kilometres",
    "cm": "centimetres", "mm": "millimetres", "kg": "kilograms", "g": "grams", "lb": "pounds",
    "lbs": "pounds", "oz": "ounces", "mhz": "MHz", "khz": "kHz", "ghz": "GHz", "kb": "KB", "mb": "MB",
    "gb": "GB",
}  # fmt: skip  # "how many" takes a plural and a spoken unit: "how many inches", not "how many inch"


def _plural_unit(unit: str) -> str:
    named = _UNIT_NAMES.get(unit.lower())
    if named:
        return named
    low = unit.lower()
    return low if low.endswith("s") or low == "feet" else low + "s"


def quantity_question(sentence: str) -> str | None:
    """The clause stating an amount, its figure asked back: ``Keep jars covered by at least 1 inch of
    water`` -> ``Keep jars covered by at least how many inches of water?``; at least two words before the
    figure, so the question has a subject or a verb (drafting also needs it :func:`anchored`)."""
    match = _QUANTITY.search(sentence)
    if not match:
        return None
    clause_start = max(sentence.rfind(mark, 0, match.start()) for mark in (",", ";", "(")) + 1
    ends = [i for mark in (",", ";", ":", "(", ")", ".") if (i := sentence.find(mark, match.end())) != -1]
    before = sentence[clause_start : match.start()].strip()
    after = sentence[match.end() : min(ends) if ends else len(sentence)].strip()
    unit = match.group("unit")
    ask = "what percent" if unit.lower() in {"%", "percent"} else f"how many {_plural_unit(unit)}"
    clause = " ".join(part for part in (before, ask, after) if part)
    first = clause.split()[0].lower()
    if not 4 <= len(clause.split()) <= 18 or first in NOT_SUBJECT or len(before.split()) < 2:
        return None
    return clause[:1].upper() + clause[1:] + "?"


_CLOZE_VERB = re.compile(
    r"\b(?:is|are|was|were|means|lasts|takes|needs|requires|uses|contains|holds|includes|returns|"
    r"causes|prevents|called|named|known as|set to|defaults to|should be|must be|can be)\b"
)


def cloze_question(sentence: str) -> str | None:
    """A statement's object asked back: ``Errors detected during execution are called exceptions.`` ->
    ``Errors detected during execution are called what?``, cut after the first linking verb of the
    sentence's first two thirds, when 3 to 15 words precede it and at least 2 follow (the answer).
    Training data for containment, not a draft: its gap rarely says what it is about."""
    words_ = sentence.rstrip(".!?").split()
    if not 6 <= len(words_) <= 40 or not sentence[:1].isalnum() or words_[0].lower() in NOT_SUBJECT:
        return None
    match = _CLOZE_VERB.search(sentence)
    if not match:
        return None
    before = sentence[: match.end()].split()
    after = sentence[match.end() :].split()
    if not 3 <= len(before) <= 15 or len(after) < 2 or len(before) > 2 * len(words_) // 3 + 1:
        return None
    return " ".join(before) + " what?"


def sourced_questions(doc: DocText) -> Iterator[tuple[str, str]]:
    """(source sentence, question) for every sentence a template applies to, in document order: the
    sentence states the question's answer (a containment model's positive, anchored or not)."""
    for sentence in doc.sentences:
        for question in (
            definition_question(sentence),
            modal_question(sentence),
            quantity_question(sentence),
        ):
            if question:
                yield sentence, question


def sentence_questions(doc: DocText) -> Iterator[str]:
    """A question for every sentence a template applies to, in document order."""
    for _, question in sourced_questions(doc):
        yield question


def drafted_questions(doc: DocText) -> Iterator[tuple[str, str]]:
    """(source, question) a person is shown: the heading forms, then the sentence forms that say what
    they are about. Not filtered by :data:`RETIRED`: the forms themselves must not make those (a test
    reads every draft of the shipped corpora against the list)."""
    for heading in doc.headings:
        if question := heading_question(doc, heading):
            yield "template:heading", question
    for _, question in sourced_questions(doc):
        if not context_free(question, doc):
            yield "template:sentence", question
