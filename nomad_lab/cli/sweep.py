"""``nomad-lab sweep``: gate sweeps over a stored candidate dump, or a notebook over a parameter grid.

``nomad-lab sweep --dump D`` sweeps score floor, cosine floor and contrast over the stored pools (no
retrieval, no model). ``nomad-lab sweep NOTEBOOK -p name value …`` executes the notebook with papermill
once per grid cell (a name given twice is an axis), here or on Dask, keeping each cell under
``results/notebooks/``; a rerun skips every cell already computed.

The gate sweep is the registered ``floor-sweep`` study (``nomad-lab study floor-sweep`` runs the same): its
options
here are generated from that study's declaration, and it runs through the same door.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nomad_lab.cli.workspace_args import add_cluster_arguments, add_store_argument


def register(subparsers: Any) -> None:
    from nomad_lab.cli.study import add_params
    from nomad_lab.core.workspace import RESULTS_DIR
    from nomad_lab.studies.registry import get
    from nomad_lab.studies.shape import declared

    parser = subparsers.add_parser(
        "sweep", help="gate sweeps over a dump, or a notebook over a parameter grid (papermill)"
    )
    parser.add_argument(
        "notebook", nargs="?", help="notebook name or path (e.g. floor_sweep); omit with --dump"
    )
    parser.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="notebook parameter (VALUE parsed as JSON when it can be); repeat a NAME for a grid axis",
    )
    parser.add_argument("--cells-dir", type=Path, default=RESULTS_DIR / "notebooks", help="where cells go")
    add_store_argument(parser)  # records each finished cell
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="execute every cell, even those already computed (inputs that a "
        "cell reads from a folder, such as a stored study, are not part of its key)",
    )
    parser.add_argument(
        "--cell-timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds a notebook cell may wait for its kernel; past it, one rerun on a fresh kernel",
    )
    add_cluster_arguments(parser)
    # the floor study's options (--dump, --alpha, --refusal-tag, --out); --store is the one above
    add_params(parser, declared(get("floor-sweep")), skip=("store",), suppress=True)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nomad_lab.cli.study import given
    from nomad_lab.core.errors import NomadLabError
    from nomad_lab.publish.results import write
    from nomad_lab.runners.studies import run_study
    from nomad_lab.studies.registry import get
    from nomad_lab.studies.shape import declared

    floor = get("floor-sweep")
    options = given(args, declared(floor))  # only the options given, and --store
    dump = options.get("dump")
    if args.notebook and dump:
        raise NomadLabError(
            f"sweep: --dump is for the gate sweep; pass it to {args.notebook} as -p dump PATH"
        )
    if args.notebook:
        return run_notebook_grid(args)
    if not dump:
        raise NomadLabError("sweep: give a NOTEBOOK to run, or --dump DUMP for a gate sweep")
    if args.parameter:
        raise NomadLabError("sweep: -p sets notebook parameters; name the NOTEBOOK first")
    # --store is sweep's own option, the same declaration
    study, paths = run_study("floor-sweep", publish=write, **options)
    print(study.markdown())
    for name, path in paths.items():
        print(f"wrote {name}: {path}")
    return 0


def run_notebook_grid(args: argparse.Namespace) -> int:
    from nomad_lab.runners.cluster import dask_client
    from nomad_lab.runners.notebooks import cells_for, run_cells

    cells = cells_for(args.notebook, [tuple(pair) for pair in args.parameter])
    with dask_client(args.scheduler, args.workers) as client:
        results = run_cells(
            cells,
            args.cells_dir,
            client=client,
            store_path=args.store,
            rerun=args.rerun,
            cell_timeout=args.cell_timeout,
        )
    for result in results:
        state = "already computed" if result.skipped else f"{result.seconds:.1f} s"
        print(f"{result.notebook} {result.parameters}: {result.output_dir} ({state})")
    return 0
