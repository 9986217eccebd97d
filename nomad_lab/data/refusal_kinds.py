"""Refusal kinds: the two questions a gate answers, kept apart.

A refusal golden is a question the library should not answer, but not all for the same reason, and the
reason decides which instrument can catch it:

- ``off-topic``: no document is about it ("What is the capital of Australia?" against a first-aid
  library). The reference's question, *is the retrieved context about what was asked?*, is measured on
  these alone: a topicality gate (floor, judge, learned gate) should drop their context.
- ``unanswerable``: a document is about the entity or subject, none states what is asked ("How many hours
  can a tourniquet stay on?" against a bleeding-control page that never says). The context *is* on topic,
  so a topicality gate should pass it; only a sufficiency check (does any passage state the answer?) can
  tell.
- ``near-domain``: a sibling topic the library does not cover (snake bites beside a first-aid library
  that covers burns and bleeding). Topically close, so counted apart from both.

Blending them in one leak rate answers neither question, so every figure is split by kind. The kind is
data, not a pattern over question text: a golden may carry ``refusalKind``; otherwise it is derived from
its tags through :data:`TAG_KINDS` (suites in the reference's format carry tags only), and a refusal
whose tags name no kind is counted as off-topic, the reference's own reading of ``expectRefusal``.
"""

from __future__ import annotations

from collections.abc import Iterable

OFF_TOPIC = "off-topic"
UNANSWERABLE = "unanswerable"
NEAR_DOMAIN = "near-domain"
REFUSAL_KINDS = (OFF_TOPIC, UNANSWERABLE, NEAR_DOMAIN)
"""Every refusal has exactly one of these; the first is the headline (the reference's question)."""

KIND_DEFINITIONS = {
    OFF_TOPIC: "no document of the library is about it; the context retrieved for it is off topic",
    UNANSWERABLE: "a document is about its entity or subject, but none states what is asked",
    NEAR_DOMAIN: "a sibling topic of one the library covers, which the library itself does not cover",
}
"""One sentence per kind, shown wherever a person labels or reads a kind (widgets, pages)."""

TAG_KINDS: dict[str, str] = {
    # the kind names themselves
    OFF_TOPIC: OFF_TOPIC,
    UNANSWERABLE: UNANSWERABLE,
    NEAR_DOMAIN: NEAR_DOMAIN,
    # a named entity or subject the library covers, an attribute no document states
    "adversarial": UNANSWERABLE,
    "fictional": UNANSWERABLE,
    "adversarial/fictional": UNANSWERABLE,
    # no document on it at all
    "out-of-corpus": OFF_TOPIC,
    "missing-domain": OFF_TOPIC,
    "other-domain": OFF_TOPIC,
    "other-language": OFF_TOPIC,
    "general-knowledge": OFF_TOPIC,
    "chit-chat": OFF_TOPIC,
    "personal": OFF_TOPIC,
    "instruction": OFF_TOPIC,
    "gibberish": OFF_TOPIC,
    "prompt-injection": OFF_TOPIC,
    "coding": OFF_TOPIC,
}
"""The one table from golden tags to a refusal kind. A tag naming ``unanswerable`` or ``near-domain``
outranks the generic off-topic tags (suites tag near-domain questions ``off-topic, near-domain``)."""

_SPECIFIC = (UNANSWERABLE, NEAR_DOMAIN)


class KindError(ValueError):
    """A refusal whose kind is not one of :data:`REFUSAL_KINDS`, or whose tags name two specific kinds."""


def tag_kind(tags: Iterable[str]) -> str | None:
    """The kind the tags name (a specific kind outranks off-topic), or None when no tag names one.

    Raises :class:`KindError` when the tags name both ``unanswerable`` and ``near-domain``: which one
    the question is must then be said with ``refusalKind``."""
    named = {TAG_KINDS[t] for t in tags if t in TAG_KINDS}
    specific = [k for k in _SPECIFIC if k in named]
    if len(specific) > 1:
        raise KindError(f"tags name two refusal kinds ({' and '.join(specific)}): set refusalKind to one")
    if specific:
        return specific[0]
    return OFF_TOPIC if OFF_TOPIC in named else None


def kind_of(tags: Iterable[str], explicit: str | None = None) -> str:
    """A refusal's kind: ``explicit`` (a golden's ``refusalKind``) when given, else what its tags name,
    else off-topic."""
    if explicit is not None:
        if explicit not in REFUSAL_KINDS:
            raise KindError(f"refusalKind must be one of {', '.join(REFUSAL_KINDS)}, got {explicit!r}")
        return explicit
    return tag_kind(tags) or OFF_TOPIC


def question_kinds(
    tags: Iterable[Iterable[str]], refusal: Iterable[bool], explicit: Iterable[str | None] | None = None
) -> list[str]:
    """One kind per question, ``""`` for an answerable one (the per-question array pools carry)."""
    tags, refusal = list(tags), list(refusal)
    given = [None] * len(tags) if explicit is None else list(explicit)
    return [kind_of(t, e) if r else "" for t, r, e in zip(tags, refusal, given, strict=True)]
