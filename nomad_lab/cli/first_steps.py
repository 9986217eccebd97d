"""``nomad-lab first-run``: what a fresh clone runs once so that every notebook has what it reads.

Why a command of its own: explore and the studies read the main run (``core,off_topic`` at floor 0),
the floor sweep its candidate dump, the label notebook a drafts file, and a newcomer following one
message after another stored one of them at a time (or the wrong one: a core-only dump). This runs the
two commands that store all three, through the same parsers as typed by hand:

    nomad-lab eval retrieval --suite core,off_topic --floor 0 --dump runs/dumps/core-off_topic.json
    nomad-lab goldens draft --out runs/label

and skips what is already there (the main run over the corpus with its dump; a drafts file), so running
it again costs nothing. Every place that finds no run names this command
(:func:`nomad_lab.core.first_run.first_run_line`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    from nomad_lab.cli.workspace_args import add_corpus_arguments, add_store_argument
    from nomad_lab.core.first_run import DEFAULT_DUMP, DEFAULT_LABEL_DIR, WHAT_IT_STORES

    parser = subparsers.add_parser(
        "first-run", help=f"store what every notebook reads ({WHAT_IT_STORES}, and drafts to label)"
    )
    add_corpus_arguments(parser)
    add_store_argument(parser)
    parser.add_argument(
        "--dump",
        type=Path,
        default=Path(DEFAULT_DUMP),
        help="where the candidate dump goes (default: %(default)s)",
    )
    parser.add_argument(
        "--label-dir",
        type=Path,
        default=Path(DEFAULT_LABEL_DIR),
        help="where the label notebook's drafts go (default: %(default)s)",
    )
    parser.add_argument("--force", action="store_true", help="retrieve and draft again even if stored")
    parser.set_defaults(func=run)


def steps(args: argparse.Namespace) -> list[tuple[str, list[str]]]:
    """The commands still to run (all of them with ``--force``), each with what it stores."""
    from nomad_lab.data.golden_suites import DRAFTS_SUITE, suite_path

    where = ["--corpus", str(args.corpus), "--goldens", str(args.goldens), "--store", str(args.store)]
    todo = []
    if args.force or not (_main_stored(args.store, args.corpus) and args.dump.is_file()):
        retrieval = [
            "eval",
            "retrieval",
            "--suite",
            "core,off_topic",
            "--floor",
            "0",
            "--dump",
            str(args.dump),
        ]
        todo.append(("the main run and its dump (explore, floor_sweep, the studies)", [*retrieval, *where]))
    if args.force or not suite_path(args.label_dir, DRAFTS_SUITE).is_file():
        draft = ["goldens", "draft", "--corpus", str(args.corpus), "--out", str(args.label_dir)]
        todo.append(("drafts to label (the label notebook)", draft))
    return todo


def _main_stored(store: Path, corpus: Path) -> bool:
    from nomad_lab.eval.stored_runs import main_run
    from nomad_lab.store import Store

    if not Path(store).is_file():
        return False
    with Store(store, read_only=True) as opened:
        return main_run(opened, corpus) is not None


def run(args: argparse.Namespace) -> int:
    from nomad_lab.cli import main

    todo = steps(args)
    if not todo:
        print(f"already stored: the main run in {args.store}, {args.dump}, drafts in {args.label_dir}")
    for k, (what, argv) in enumerate(todo, start=1):
        print(f"[{k}/{len(todo)}] {what}: nomad-lab {' '.join(argv)}", flush=True)
        code = main(argv)
        if code:
            return code
    print(
        "next: `jupyter lab`, open notebooks/explore.py (Open With > Jupytext Notebook) and Run All; "
        "floor_sweep and label read what was stored here too"
    )
    return 0
