"""``nomad-lab goldens check``: a hard-refusal suite read against its nearest documents.

``goldens check [--corpus DIR --goldens DIR] [--suite hard_refusals]`` writes ``GOLDENS/SUITE_check.md``:
each question beside its three nearest documents, whether retrieval at floor 0 returns anything, and
the ``checked`` column a person fills after reading them (kept across reruns while the question and its
documents are unchanged). ``--show`` prints the passages of the questions still to read. Exit 1 while any
verdict is not ``not answered``. Python: ``nomad_lab.eval.refusal_check.check_suite``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nomad_lab.cli.workspace_args import add_corpus_arguments, add_store_argument


def register(sub: Any) -> None:
    check = sub.add_parser("check", help="read a hard-refusal suite against its nearest documents")
    add_corpus_arguments(check)
    add_store_argument(check)
    check.add_argument("--suite", default="hard_refusals", help="the suite to check (default: %(default)s)")
    check.add_argument("--table", type=Path, help="the table to write (default: GOLDENS/SUITE_check.md)")
    check.add_argument("--show", action="store_true", help="print the nearest passages of unchecked rows")
    check.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nomad_lab.eval.refusal_check import check_suite  # heavy

    done = check_suite(
        Path(args.corpus),
        Path(args.goldens),
        args.suite,
        Path(args.store),
        args.table,
        print if args.show else None,
    )
    print(
        f"{done.table}: {done.rows} questions, {done.retrieving} retrieve at floor 0, "
        f"{done.pending} not yet checked"
    )
    return 1 if done.pending else 0
