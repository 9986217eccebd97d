"""``nomad-lab study injection``: how often an injected passage flips the relevance judge's verdict.

Kept apart from ``cli/study.py`` so each study's options read in one place; ``study.register``
adds this subcommand to the ``study`` group.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nomad_lab.cli.workspace_args import add_corpus_arguments, add_progress_argument, add_store_argument
from nomad_lab.core.workspace import RESULTS_DIR


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of questions, got {text}")
    return value


def register_injection(studies: Any, run_study: Any) -> None:
    """The ``injection`` subcommand, run by ``study.run_study`` like every other study."""
    parser = studies.add_parser("injection", help="verdict flips when a passage carries an injection")
    parser.add_argument("--judge-model", required=True, metavar="SPEC", help="e.g. embedded:gemma3-270m")
    parser.add_argument("--suite", default="off_topic", help="suite(s) whose refusal questions are judged")
    parser.add_argument("--limit", type=_positive, default=30, help="judge the first N questions (30)")
    parser.add_argument("--floor", type=float, default=0.0, help="the floor the judge runs after (0)")
    add_corpus_arguments(parser)
    add_store_argument(parser)
    parser.add_argument(
        "--out",
        type=Path,
        default=RESULTS_DIR / "injection",
        help="where the table goes (default: %(default)s)",
    )
    add_progress_argument(parser)
    parser.set_defaults(func=run_study)
