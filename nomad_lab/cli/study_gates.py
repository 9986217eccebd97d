"""``nomad-lab study gates``: its options made from the study's declared parameters (``Study.params``).

Kept small on purpose: the one-door work generates every study's subparser from ``Study.params``;
until then this reads the same declarations, so the option names cannot drift from what the study reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nomad_lab.cli.workspace_args import add_corpus_arguments, add_store_argument
from nomad_lab.core.workspace import RESULTS_DIR

SHARED = {"corpus", "goldens", "store"}
"""Workspace options every command declares alike (cli.workspace_args): the same names, defaults and help."""


def register_gates(studies: Any, run_study: Any) -> None:
    """The ``gates`` subcommand, run by ``study.run_study`` like every other study."""
    from nomad_lab.studies.gating.gates import PARAMS

    parser = studies.add_parser("gates", help="gate leaderboard: every gate family, out of fold, on one run")
    add_corpus_arguments(parser)
    add_store_argument(parser)
    for p in PARAMS:
        if p.name in SHARED:
            continue
        if p.flag:
            parser.add_argument(p.option, action="store_true", help=p.help)
        else:
            parser.add_argument(
                p.option,
                type=p.type,
                default=p.default,
                nargs="+" if p.many else None,
                metavar=p.metavar,
                help=p.help + ("" if p.default in (None, []) else " (default: %(default)s)"),
            )
    parser.add_argument(
        "--out",
        type=Path,
        default=RESULTS_DIR / "gates",
        help="where the leaderboard goes (default: %(default)s)",
    )
    parser.set_defaults(func=run_study)
