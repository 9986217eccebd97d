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

from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.kind_records import RefusalKind, kind_records

KINDS: dict[str, RefusalKind] = {k.name: k for k in kind_records()}
"""Every refusal kind's record by name, in table order (the headline first): one module each under
:mod:`nomad_lab.data.kind_records`, read by every table that lists kinds."""
REFUSAL_KINDS = tuple(KINDS)
"""Every refusal has exactly one of these; the first is the headline (the reference's question)."""
OFF_TOPIC, UNANSWERABLE, NEAR_DOMAIN = "off-topic", "unanswerable", "near-domain"
"""The kinds code asks for by name (a sufficiency check measures unanswerable refusals)."""
if REFUSAL_KINDS[0] != OFF_TOPIC or not {UNANSWERABLE, NEAR_DOMAIN} <= set(REFUSAL_KINDS):
    raise NomadLabError(
        f"refusal kinds {REFUSAL_KINDS}: off-topic first, unanswerable and near-domain among them"
    )

KIND_DEFINITIONS = {name: kind.definition for name, kind in KINDS.items()}
"""One sentence per kind, shown wherever a person labels or reads a kind (widgets, pages)."""

TAG_KINDS: dict[str, str] = {
    **{name: name for name in KINDS},  # the kind names themselves
    **{tag: kind.name for kind in KINDS.values() for tag in kind.tags},
}
"""The one table from golden tags to a refusal kind, read from the kinds' records. A tag naming a specific
kind (any but the headline) outranks the generic off-topic tags (suites tag near-domain questions
``off-topic, near-domain``)."""

_SPECIFIC = REFUSAL_KINDS[1:]


def kind_label(name: str) -> str:
    """A kind's column head (``off-topic leak``, ``unanswerable pass``); an unknown name as it is."""
    return KINDS[name].label if name in KINDS else name


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
    return REFUSAL_KINDS[0] if REFUSAL_KINDS[0] in named else None


def kind_of(tags: Iterable[str], explicit: str | None = None) -> str:
    """A refusal's kind: ``explicit`` (a golden's ``refusalKind``) when given, else what its tags name,
    else off-topic."""
    if explicit is not None:
        if explicit not in REFUSAL_KINDS:
            raise KindError(f"refusalKind must be one of {', '.join(REFUSAL_KINDS)}, got {explicit!r}")
        return explicit
    return tag_kind(tags) or REFUSAL_KINDS[0]


def question_kinds(
    tags: Iterable[Iterable[str]], refusal: Iterable[bool], explicit: Iterable[str | None] | None = None
) -> list[str]:
    """One kind per question, ``""`` for an answerable one (the per-question array pools carry)."""
    tags, refusal = list(tags), list(refusal)
    given = [None] * len(tags) if explicit is None else list(explicit)
    return [kind_of(t, e) if r else "" for t, r, e in zip(tags, refusal, given, strict=True)]
