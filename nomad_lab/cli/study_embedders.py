"""``nomad-lab study embedders``: embedders side by side on the same goldens, and whether a floor transfers.

Reads stored retrieval runs (one per ``nomad-lab eval retrieval --embedder SPEC``); the study itself is
``nomad_lab.studies.gating.embedders``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nomad_lab.cli.recorded import recorded
from nomad_lab.cli.workspace_args import add_store_argument


def register_embedders(studies: Any) -> None:
    """``nomad-lab study embedders``: registered by ``cli.study`` beside the other studies."""
    from nomad_lab.core.workspace import (
        DEFAULT_CORPUS_DIR,
        DEFAULT_GOLDENS_DIR,
        RESULTS_DIR,
    )

    parser = studies.add_parser("embedders", help="recall, leak and calibrated floor per embedder; transfer")
    add_store_argument(parser)
    parser.add_argument(
        "--run",
        action="append",
        default=None,
        help="retrieval run id, repeatable (default: the latest run of each embedder in the store)",
    )
    parser.add_argument("--alpha", type=float, default=0.10, help="leak target for the calibrated floor")
    parser.add_argument(
        "--embedder",
        action="append",
        metavar="SPEC",
        help="retrieve the goldens with this embedder first (repeatable; see eval retrieval --embedder)",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        default=DEFAULT_CORPUS_DIR,
        help="corpus directory (*.md) (default: %(default)s)",
    )
    parser.add_argument(
        "--goldens",
        type=Path,
        default=DEFAULT_GOLDENS_DIR,
        help="goldens directory (*.jsonl) (default: %(default)s)",
    )
    parser.add_argument("--suite", default="core,off_topic", help="suites retrieved with --embedder")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "embedders", help="output folder")
    parser.set_defaults(func=run_embedders)


@recorded
def run_embedders(args: argparse.Namespace) -> int:
    from nomad_lab.core.errors import NomadLabError
    from nomad_lab.studies.gating.embedders import (
        comparison_markdown,
        latest_run_per_embedder,
        run_embedder_comparison,
        write_comparison,
    )

    if args.embedder:
        if args.run:
            raise NomadLabError("study embedders: give --embedder specs to retrieve, or --run ids, not both")
        workspace = {"corpus_dir": args.corpus, "goldens_dir": args.goldens, "suite": args.suite}
        data = run_embedder_comparison(
            args.embedder, args.out, args.alpha, not args.no_progress, store_path=args.store, **workspace
        )
        print(comparison_markdown(data))
        print(f"wrote {args.out}/embedders.json, .md, .png and presets-*.json")
        return 0
    runs = args.run or latest_run_per_embedder(args.store)
    if len(runs) < 2:
        raise NomadLabError(
            f"{args.store}: need retrieval runs of two embedders (found {len(runs)}); run "
            "`nomad-lab eval retrieval --embedder SPEC` for each"
        )
    print(comparison_markdown(write_comparison(args.store, runs, args.out, args.alpha)))
    print(f"wrote {args.out}/embedders.json, .md, .png")
    return 0
