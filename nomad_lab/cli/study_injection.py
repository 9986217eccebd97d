"""``nomad-lab study injection``: how often an injected passage flips the relevance judge's verdict.

Kept apart from ``cli/study.py`` so each study's options read in one place; ``study.register``
adds this subcommand to the ``study`` group.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR, DEFAULT_STORE_PATH, RESULTS_DIR


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
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS_DIR)
    parser.add_argument("--goldens", type=Path, default=DEFAULT_GOLDENS_DIR)
    parser.add_argument("--store", type=Path, default=DEFAULT_STORE_PATH, help="workspace DuckDB store")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "injection")
    parser.add_argument("--no-progress", action="store_true")
    parser.set_defaults(func=run_study)
