"""The workspace options every ``nomad-lab eval`` tier takes, declared once so they read the same everywhere.

Why: ``--corpus``, ``--goldens``, ``--suite``, ``--no-distractors``, ``--report``, ``--store`` and
``--no-progress`` mean the same thing in every tier; declared per command they drift (help texts,
defaults). ``eval generation`` uses this; ``eval retrieval`` declares the same options inline today.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_workspace_arguments(parser: argparse.ArgumentParser, *, report_what: str = "reports") -> None:
    """Corpus and goldens locations, suite selection, distractors, reports, store and progress bars."""
    from nomad_lab.workspace import (
        DEFAULT_CORPUS_DIR,
        DEFAULT_GOLDENS_DIR,
        DEFAULT_REPORTS_DIR,
        DEFAULT_STORE_PATH,
    )

    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS_DIR, help="corpus directory (*.md)")
    parser.add_argument(
        "--goldens", type=Path, default=DEFAULT_GOLDENS_DIR, help="goldens directory (*.jsonl)"
    )
    parser.add_argument("--suite", default="core", help="suite(s): NAME, a,b or * (default: core)")
    parser.add_argument("--no-distractors", action="store_true", help="leave distractor-*.md docs out")
    parser.add_argument(
        "--report",
        type=Path,
        nargs="?",
        const=DEFAULT_REPORTS_DIR,
        metavar="DIR",
        help=f"write JSON and markdown {report_what} (default dir: {DEFAULT_REPORTS_DIR})",
    )
    parser.add_argument("--store", type=Path, default=DEFAULT_STORE_PATH, help="workspace DuckDB store")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
