"""``nomad-lab eval check``: validate the corpus and golden suites offline, before any model is loaded.

Why: a typo in a doc id or a regex would otherwise surface minutes into a run (or, for ``mustInclude``
patterns, only in the generation tier). ``eval corpus --check`` runs these checks and then the
reference's run check (no retrieved chunk from outside the eval corpus).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any


def register(subparsers: Any) -> None:
    from nomad_lab.cli.workspace_args import add_corpus_arguments

    parser = subparsers.add_parser("check", help="validate the eval corpus and golden suites (offline)")
    add_corpus_arguments(parser)
    parser.add_argument("--suite", default="*", help="suites to check: NAME, a,b or * (default: all)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nomad_lab.data.corpus import CorpusError, load_corpus
    from nomad_lab.data.golden_suites import GoldenError, load_suites

    try:
        corpus = load_corpus(args.corpus)
        goldens = load_suites(args.goldens, args.suite, corpus.all_doc_ids)
    except (CorpusError, GoldenError) as exc:
        print(f"eval check: {exc}", file=sys.stderr)
        return 1
    distractors = sum(1 for doc in corpus.docs if doc.is_distractor)
    print(f"corpus {corpus.directory}: {len(corpus.docs)} docs ({distractors} distractors)")
    by_suite: dict[str, list] = {}
    for golden in goldens:
        by_suite.setdefault(golden.suite, []).append(golden)
    for suite, items in by_suite.items():
        refusals = sum(1 for g in items if g.expect_refusal)
        tags = Counter(tag for g in items for tag in g.tags)
        tag_text = ", ".join(f"{tag} {n}" for tag, n in sorted(tags.items(), key=lambda t: (-t[1], t[0])))
        print(
            f"suite {suite}: {len(items)} goldens, {refusals} expected refusals; tags: {tag_text or 'none'}"
        )
    referenced = {doc_id for g in goldens for doc_id in g.relevant_doc_ids}
    unreferenced = [doc.doc_id for doc in corpus.docs if doc.doc_id not in referenced]
    for doc_id in unreferenced:
        print(f"warning: corpus doc {doc_id!r} is not referenced by any golden", file=sys.stderr)
    print(f"ok: {len(goldens)} goldens in {len(by_suite)} suite(s) are valid")
    return 0
