"""When a sitting's figure can first be drawn, for a drafts file, in three orders: as drafted, the early
deal, and the deal with refusals first.

Why a script: the deal (:mod:`nomad_lab.data.draft_deal`) exists so the fifth label of each refusal kind
and the figure's five answerable and five refusal labels come within twenty decisions; this reads a real
drafts file (``nomad-lab first-run`` writes ``runs/label/drafts.jsonl``) and prints the decision at which
each arrives when every draft's own guess is accepted. No model, no store.

    python scripts/deal_timing.py runs/label/drafts.jsonl
"""

from __future__ import annotations

import sys

from nomad_lab.data.draft_deal import ANSWERABLE_DRAFT, EARLY_ROUNDS, deal, draft_kind
from nomad_lab.data.golden_suites import load_suite_file
from nomad_lab.eval.gating.label_sitting import MIN_PER_CLASS


def arrivals(kinds: list[str]) -> tuple[dict[str, int | None], int | None]:
    """The decision bringing the fifth draft of each kind, and the first with enough of both labels."""
    fifth = {
        kind: ([i for i, k in enumerate(kinds, 1) if k == kind][EARLY_ROUNDS - 1 : EARLY_ROUNDS] or [None])[0]
        for kind in sorted(set(kinds))
    }
    answerable = refusals = 0
    for i, kind in enumerate(kinds, 1):
        answerable += kind == ANSWERABLE_DRAFT
        refusals += kind != ANSWERABLE_DRAFT
        if min(answerable, refusals) >= MIN_PER_CLASS:
            return fifth, i
    return fifth, None


def main(path: str) -> None:
    drafts = load_suite_file(path, drafts=True)
    by_id = {d.id: d for d in drafts}
    orders = {
        "as drafted": [d.id for d in drafts],
        "deal": deal(drafts),
        "deal, refusals first": deal(drafts, refusals_first=True),
    }
    for name, order in orders.items():
        fifth, figure = arrivals([draft_kind(by_id[i]) for i in order])
        print(f"{name}: fifth of each kind at {fifth}; figure drawable at decision {figure}")


if __name__ == "__main__":
    main(sys.argv[1])
