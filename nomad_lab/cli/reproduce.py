"""``nomad-lab reproduce``: the main job's options; the job itself is :mod:`nomad_lab.publish.main_job`."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("reproduce", help="regenerate every published result (the main job)")
    parser.add_argument("--list", action="store_true", help="print the steps and exit")
    parser.add_argument("--from", dest="start", type=int, default=1, help="start at step N (1-based)")
    parser.add_argument(
        "--to", dest="stop", type=int, default=None, help="stop after step N (with --from N: just that step)"
    )
    parser.add_argument(
        "--force", action="store_true", help="rerun steps already done with this code and data"
    )
    parser.add_argument(
        "--allow-dirty",
        action="store_true",
        help="publish even with uncommitted changes to code, notebooks or data (the manifest says so)",
    )
    parser.add_argument(
        "--gallery-only",
        action="store_true",
        help="rewrite results/index.html from what is stored; run nothing",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nomad_lab.cli import main
    from nomad_lab.publish.main_job import run_job

    return run_job(args, main)
