"""``nomad-lab goldens kinds``: each refusal's kind; every ``unanswerable`` one checked against the corpus.

``goldens kinds --corpus DIR --goldens DIR [--suite SPEC]`` prints how many refusals of each kind the suites
hold (how many of them by ``refusalKind``, how many from their tags, how many counted as off-topic for
want of a kind), then one line per unanswerable refusal that names nothing the corpus names
(:mod:`nomad_lab.data.kind_check`) with the kind the check suggests. Exit 1 while such a refusal has no
``refusalKind`` of its own: a person reads it and writes the kind on its line. Python:
``nomad_lab.data.kind_check.check_kinds``.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from nomad_lab.cli.workspace_args import add_corpus_arguments


def register(sub: Any) -> None:
    kinds = sub.add_parser(
        "kinds", help="count refusal kinds; check unanswerable refusals against the corpus"
    )
    add_corpus_arguments(kinds)
    kinds.add_argument("--suite", default="*", help="suites to check (default: every suite of --goldens)")
    kinds.add_argument("--all", action="store_true", help="also list the unanswerable refusals that pass")
    kinds.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nomad_lab.data.corpus import load_corpus
    from nomad_lab.data.golden_suites import kindless_refusals, load_suites
    from nomad_lab.data.kind_check import check_kinds

    corpus = load_corpus(args.corpus)
    goldens = load_suites(args.goldens, args.suite, [d.doc_id for d in corpus.docs])
    refusals = [g for g in goldens if g.expect_refusal]
    counts = Counter(g.refusal_kind for g in refusals)
    given = sum(g.kind_given for g in refusals)
    kindless = len(kindless_refusals(refusals))
    print(
        f"{len(refusals)} refusals: "
        + ", ".join(f"{n} {kind}" for kind, n in counts.most_common())
        + f" ({given} by refusalKind, {len(refusals) - given - kindless} from their tags, {kindless} "
        "counted as off-topic for want of a kind)"
    )
    findings = check_kinds(goldens, [(d.doc_id, d.text) for d in corpus.docs])
    for f in findings:
        if f.named and not args.all:
            continue
        docs = "; ".join(f"{t}: {', '.join(d) or 'no document'}" for t, d in f.documents.items())
        state = "refusalKind kept" if f.given else f"suggested {f.suggested_kind}"
        print(f"{f.location}: {f.golden_id}: {f.verdict} [{docs}] -> {state}")
    disputed = [f for f in findings if f.disputed]
    unnamed = sum(not f.named for f in findings)
    print(
        f"{len(findings)} unanswerable refusals checked; {unnamed} name nothing the corpus names, "
        f"{len(disputed)} of them without a refusalKind of their own"
    )
    return 1 if disputed else 0
