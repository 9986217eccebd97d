"""``nomad-lab sweep``: gate sweeps over a stored candidate dump, no retrieval and no model re-run."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("sweep", help="sweep score floor, cosine floor and contrast over a dump")
    parser.add_argument("--dump", required=True, help="candidate dump (reference --dump JSON format)")
    parser.add_argument("--out", default="results/floor_sweep", help="output folder (JSON, markdown, PNG)")
    parser.add_argument("--alpha", type=float, default=0.10, help="target leak rate for the calibrated floor")
    parser.add_argument("--refusal-tag", default=None, help="count leaks only on refusals with this tag")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..floor_study import floor_study_from_dump, markdown_table

    study, paths = floor_study_from_dump(args.dump, args.out, alpha=args.alpha, refusal_tag=args.refusal_tag)
    print(markdown_table(study))
    print()
    print(study.calibrated.message)
    for name, path in paths.items():
        print(f"wrote {name}: {path}")
    return 0
