"""``nomad-lab floors presets``: Off / Lenient / Balanced / Strict floors for the embedder of a stored run.

Why a command: the floor a user should set depends on the embedding model they run; this turns a stored
``eval retrieval`` run (any ``--embedder``) into a small JSON of preset floors with intervals to carry to
the assistant's settings. Rules: ``nomad_lab.gate.floor_presets``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nomad_lab.cli.workspace_args import add_store_argument, add_stored_run_argument


def register(subparsers: Any) -> None:
    from nomad_lab.core.workspace import RESULTS_DIR

    parser = subparsers.add_parser("floors", help="per-embedding-model floor presets from stored pools")
    sub = parser.add_subparsers(dest="floors_command", metavar="FLOORS_COMMAND", required=True)
    presets = sub.add_parser("presets", help="Off/Lenient/Balanced/Strict floors with 95%% intervals (JSON)")
    add_store_argument(presets)
    add_stored_run_argument(
        presets, "the run whose embedder the presets are for (main: over the default corpus)"
    )
    presets.add_argument(
        "--out",
        type=Path,
        default=RESULTS_DIR / "floors" / "presets.json",
        help="JSON to write (a markdown table is written beside it)",
    )
    presets.set_defaults(func=run_presets)


def run_presets(args: argparse.Namespace) -> int:
    from nomad_lab.publish.results import write
    from nomad_lab.studies.gating.presets import presets_result, stored_presets

    out = Path(args.out)
    result = presets_result(stored_presets(args.store, args.run), out.name)
    write(result, out.parent)
    print(result.markdown(), end="")
    print(f"wrote {args.out}")
    return 0
