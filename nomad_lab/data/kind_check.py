"""Checking a refusal's kind against the library: an ``unanswerable`` refusal must be about something a
document names.

Why: ``unanswerable`` means "a document is about the entity or subject, none states what is asked". A
question about an entity the library never names ("What colour is the Zephyr-12 tent?" against a library
with no Zephyr) is off topic, whatever its tags say, and counting it as unanswerable would credit a
sufficiency check with what a topicality gate should catch. Reading the three nearest documents by cosine
(``hard_refusals_check.md``) does not settle this: a document can be near without naming the entity.
So the check asks the corpus text directly, for every unanswerable refusal: which documents name each of
its entity terms (capitalized names, model codes, quoted terms), or, for a question that names no
entity, which document holds most of its content words.

Model-free and corpus-generic on purpose (no list of this corpus's names): the same rule reads any
library in the golden format.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nomad_lab.data.golden_suites import Golden
from nomad_lab.data.refusal_kinds import NEAR_DOMAIN, OFF_TOPIC, UNANSWERABLE

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’.-]*[A-Za-z0-9]|[A-Za-z0-9]")
_QUOTED = re.compile(r"(?:^|(?<=\s))[\"“‘']([^\"”’']{2,60})[\"”’'](?=[\s?.!,;:]|$)")
_POSSESSIVE = re.compile(r"['’]s$")
_QUANTITY = re.compile(r"^[\d,.]+-?[a-z]+$")
"""A number with a unit (``3,500-watt``, ``5kg``): a quantity asked about, not an entity's name."""
_CODE = re.compile(r"[a-z]\.[a-z]|_", re.IGNORECASE)
"""A code identifier (``json.dumps``, ``max_size``): an entity term whatever its case."""
_FUNCTION_WORDS = """
    a an and any are as at be by can could did do does for from has have how i if in into is it its me my
    of on or our should so that the their them there these they this to was we what when where
    which who whom why will with would you your about after before between during many much more most
    other some such than then through under until upon very does don't isn't can't won't what's"""
STOPWORDS = frozenset(_FUNCTION_WORDS.split())
"""Question words and function words: never an entity, never a content word."""
MIN_CONTENT = 4
"""Content words shorter than this (``use``, ``kit``) are too common to say what a question is about."""


@dataclass(frozen=True)
class KindFinding:
    """What the corpus says about one unanswerable refusal: its terms, the documents naming each, and
    whether anything it asks about is named at all (``named``)."""

    golden_id: str
    location: str
    query: str
    terms: tuple[str, ...]
    documents: Mapping[str, tuple[str, ...]]
    named: bool
    subject: tuple[str, ...] = ()
    """Documents holding at least half of the question's content words (its subject), whatever its terms."""
    given: bool = False
    """Whether the golden says ``refusalKind`` itself (a person decided; the check only reports)."""

    @property
    def verdict(self) -> str:
        return "about something the library names" if self.named else "names nothing the library names"

    @property
    def suggested_kind(self) -> str:
        """``unanswerable`` when the library names what it asks about; else ``near-domain`` when a
        document covers its subject (a sibling entity: another model, another place), else off-topic."""
        if self.named:
            return UNANSWERABLE
        return NEAR_DOMAIN if self.subject else OFF_TOPIC

    @property
    def disputed(self) -> bool:
        """The tags make it unanswerable, the corpus says otherwise, and no person has said which."""
        return not self.named and not self.given


def entity_terms(question: str) -> list[str]:
    """The entity-like terms of a question: quoted phrases, runs of capitalized words (a question's
    first word only when the next one is capitalized too) and tokens holding a digit (``K-9``, ``R4``)."""
    terms = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    words = [m.group(0) for m in _WORD.finditer(question)]
    run: list[str] = []
    for i, raw in enumerate(words):
        word = _POSSESSIVE.sub("", raw).rstrip(".")
        capital = word[:1].isupper() and raw.lower() not in STOPWORDS
        first_alone = i == 0 and not (len(words) > 1 and words[1][:1].isupper())
        coded = (any(c.isdigit() for c in word) and any(c.isalpha() for c in word)) or _CODE.search(word)
        coded = coded and not _QUANTITY.match(word)
        if capital and not first_alone and not _CODE.search(word):
            run.append(word)
        elif coded:
            terms += [" ".join(run)] if run else []
            terms.append(word)
            run = []
        elif run:
            terms.append(" ".join(run))
            run = []
        if run and word != raw.rstrip("."):  # a possessive ends a name: "Millbrook County's Zone E"
            terms.append(" ".join(run))
            run = []
    if run:
        terms.append(" ".join(run))
    return list(dict.fromkeys(t for t in terms if t))


def content_words(question: str) -> list[str]:
    """The question's content words (lower case, no stopwords, at least :data:`MIN_CONTENT` letters)."""
    words = (w.lower().strip("'’.-") for w in _WORD.findall(question))
    return list(dict.fromkeys(w for w in words if len(w) >= MIN_CONTENT and w not in STOPWORDS))


def _names(text: str, term: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(term.lower())}(?![A-Za-z0-9])", text) is not None


def short_names(term: str) -> list[str]:
    """What else names the same entity: a name's head word (``K-Bag`` in ``Kestrel K-Bag``), a code
    identifier's first part (the module ``json`` of ``json.dumps``)."""
    if _CODE.search(term) and "." in term:
        return [term.split(".", 1)[0]]
    words = term.split()
    return [words[-1]] if len(words) > 1 else []


def documents_naming(term: str, docs: Mapping[str, str]) -> tuple[str, ...]:
    """Documents whose text names ``term`` or one of its :func:`short_names` as a whole word or phrase
    (case-insensitive); ``docs`` maps a doc id to its lower-cased text."""
    names = [term, *short_names(term)]
    return tuple(doc for doc, text in docs.items() if any(_names(text, n) for n in names))


def check_question(golden: Golden, docs: Mapping[str, str]) -> KindFinding:
    """Whether an unanswerable refusal asks about something the library names (see the module doc)."""
    words = content_words(golden.query)
    hits = {doc: sum(_names(text, w) for w in words) for doc, text in docs.items()}
    subject = tuple(sorted(d for d, h in hits.items() if words and h * 2 >= len(words)))
    terms = entity_terms(golden.query)
    if terms:
        found = {t: documents_naming(t, docs) for t in terms}
        named = any(found.values())
    else:  # no entity: what it asks about is its subject
        terms, found, named = words, {"its content words": subject}, bool(subject)
    return KindFinding(
        golden.id, golden.location, golden.query, tuple(terms), found, named, subject, golden.kind_given
    )


def check_kinds(goldens: Iterable[Golden], docs: Sequence[tuple[str, str]]) -> list[KindFinding]:
    """One finding per unanswerable refusal of ``goldens`` against ``docs`` (``(doc id, text)`` pairs)."""
    lowered = {doc: text.lower() for doc, text in docs}
    return [check_question(g, lowered) for g in goldens if g.refusal_kind == UNANSWERABLE]
