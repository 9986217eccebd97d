"""``nomad-lab eval corpus --check``: validate the corpus and goldens, then fail if a stored retrieval run
retrieved any chunk from outside the eval corpus (``nomad_lab.eval.corpus_check``).

Exit 1 on an invalid corpus or golden, or on any chunk outside the corpus (each printed on one line).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from nomad_lab.cli import eval_check
from nomad_lab.cli.workspace_args import add_corpus_arguments, add_store_argument, add_stored_run_argument

LISTED = 20


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "corpus", help="--check: corpus and goldens valid, and no retrieved chunk outside the corpus"
    )
    add_corpus_arguments(parser)
    parser.add_argument("--suite", default="*", help="suites to check: NAME, a,b or * (default: all)")
    parser.add_argument("--check", action="store_true", required=True, help="run the checks (required)")
    add_store_argument(parser)
    add_stored_run_argument(parser, "the run checked (main: over --corpus)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nomad_lab.data.corpus import load_corpus
    from nomad_lab.eval.corpus_check import check_run_corpus

    if eval_check.run(args):
        return 1
    result = check_run_corpus(args.store, load_corpus(args.corpus), args.run)
    if result.ok:
        print(f"ok: run {result.run_id}: all {result.checked} retrieved candidates come from the eval corpus")
        return 0
    print(
        f"eval corpus: run {result.run_id}: {len(result.outside)} of {result.checked} retrieved candidates "
        "are outside the eval corpus",
        file=sys.stderr,
    )
    for chunk in result.outside[:LISTED]:
        print(f"  {chunk.golden_id} rank {chunk.rank}: {chunk.reason}", file=sys.stderr)
    if len(result.outside) > LISTED:
        print(f"  ... and {len(result.outside) - LISTED} more", file=sys.stderr)
    return 1
