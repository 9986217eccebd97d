"""The order a labelling sitting deals its drafts in before its gate can be fitted: refusals early.

Why: the live figure needs answerable and refusal labels, and a leak per refusal kind needs several of
each kind. Dealt one draft per document (:func:`nomad_lab.data.drafts.across_documents`), nearly every
early draft was an answerable heading template: the fifth refusal came at decision 113 in one sitting.
Here the first :data:`EARLY_ROUNDS` rounds each deal one answerable draft and one refusal draft of
every kind (off-topic: the bank's; unanswerable: a fictional attribute; near-domain: a swapped entity),
so five of each kind arrive within twenty decisions and the figure is drawn by the seventeenth. With
``refusals_first`` the refusal rounds come before any answerable draft: five of each kind within
fifteen. Every other draft follows in its drafted order. A kind with no drafts left is skipped, never
waited for.

Pure and standard library only: the drafts' own guesses (their refusal kind) decide, not any label.
"""

from __future__ import annotations

from collections.abc import Sequence

from nomad_lab.data.golden_suites import Golden
from nomad_lab.data.refusal_kinds import NEAR_DOMAIN, OFF_TOPIC, UNANSWERABLE, kind_of

__all__ = ["ANSWERABLE_DRAFT", "EARLY_ROUNDS", "deal", "draft_kind"]

EARLY_ROUNDS = 5
"""Rounds dealt by kind: five of each, the least the figure reads a per-kind interval from."""
ANSWERABLE_DRAFT = "answerable"
REFUSAL_ORDER = (OFF_TOPIC, UNANSWERABLE, NEAR_DOMAIN)


def draft_kind(draft: Golden) -> str:
    """The draft's own guess: :data:`ANSWERABLE_DRAFT`, or its refusal kind."""
    return kind_of(draft.tags, draft.refusal_kind) if draft.expect_refusal else ANSWERABLE_DRAFT


def deal(drafts: Sequence[Golden], refusals_first: bool = False, rounds: int = EARLY_ROUNDS) -> list[str]:
    """Every draft id once: ``rounds`` rounds by kind first (see the module doc), then the rest as drafted."""
    by_kind: dict[str, list[str]] = {}
    for draft in drafts:
        by_kind.setdefault(draft_kind(draft), []).append(draft.id)
    kinds = REFUSAL_ORDER if refusals_first else (ANSWERABLE_DRAFT, *REFUSAL_ORDER)
    early = [by_kind[k][r] for r in range(rounds) for k in kinds if r < len(by_kind.get(k, []))]
    if refusals_first:
        early += by_kind.get(ANSWERABLE_DRAFT, [])[:rounds]
    dealt = set(early)
    return early + [d.id for d in drafts if d.id not in dealt]
