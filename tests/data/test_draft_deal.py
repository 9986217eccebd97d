"""The sitting's early deal: five of each refusal kind within twenty decisions (fifteen with refusals
first), every draft once, a kind with no drafts left skipped."""

from __future__ import annotations

from nomad_lab.data.draft_deal import ANSWERABLE_DRAFT, deal, draft_kind
from nomad_lab.data.golden_suites import Golden
from nomad_lab.data.refusal_kinds import NEAR_DOMAIN, OFF_TOPIC, UNANSWERABLE


def drafts(answerable: int = 40, **refusals: int) -> list[Golden]:
    """Answerable drafts first (as one draft per document deals them), then each refusal kind's."""
    out = [Golden(f"a{i}", f"q{i}", "drafts", "f", i, relevant_doc_ids=("d",)) for i in range(answerable)]
    for kind, n in refusals.items():
        kind = kind.replace("_", "-")
        out += [
            Golden(f"{kind}{i}", f"{kind} {i}", "drafts", "f", i, expect_refusal=True, refusal_kind=kind)
            for i in range(n)
        ]
    return out


def first_reaching(kinds: list[str], kind: str, n: int = 5) -> int:
    """The decision (1-based) at which the ``n``-th draft of ``kind`` arrives."""
    return [i for i, k in enumerate(kinds, start=1) if k == kind][n - 1]


def test_five_of_each_kind_within_twenty_and_the_figure_by_seventeen() -> None:
    pile = drafts(off_topic=12, unanswerable=9, near_domain=7)
    by_id = {d.id: d for d in pile}
    dealt = deal(pile)
    assert sorted(dealt) == sorted(by_id)  # every draft once
    kinds = [draft_kind(by_id[i]) for i in dealt]
    assert max(first_reaching(kinds, k) for k in (OFF_TOPIC, UNANSWERABLE, NEAR_DOMAIN)) == 20
    assert first_reaching(kinds, ANSWERABLE_DRAFT) == 17  # 5 answerable and 5 refusals: the figure
    assert dealt[20:] == [d.id for d in pile if d.id not in set(dealt[:20])]  # then as drafted
    # drafted order, by contrast: the fifth refusal at decision 45
    assert first_reaching([draft_kind(d) for d in pile], OFF_TOPIC) == 45


def test_refusals_first_deals_fifteen_refusals_then_the_answerable() -> None:
    pile = drafts(off_topic=12, unanswerable=9, near_domain=7)
    by_id = {d.id: d for d in pile}
    kinds = [draft_kind(by_id[i]) for i in deal(pile, refusals_first=True)]
    assert kinds[:15] == [OFF_TOPIC, UNANSWERABLE, NEAR_DOMAIN] * 5
    assert kinds[15:20] == [ANSWERABLE_DRAFT] * 5


def test_a_kind_that_runs_out_is_skipped_not_waited_for() -> None:
    pile = drafts(answerable=3, off_topic=6, unanswerable=1)
    by_id = {d.id: d for d in pile}
    kinds = [draft_kind(by_id[i]) for i in deal(pile)]
    rounds = [ANSWERABLE_DRAFT, OFF_TOPIC, UNANSWERABLE] + [ANSWERABLE_DRAFT, OFF_TOPIC] * 2 + [OFF_TOPIC] * 2
    assert kinds[:9] == rounds
    assert len(kinds) == 10
