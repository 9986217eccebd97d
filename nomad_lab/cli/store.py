"""``nomad-lab store import``: bring a candidate dump (ours or the reference system's) into the store.

Why a command: a dump written elsewhere (the reference's ``eval:retrieval --dump``, a colleague's run)
becomes a stored run that gate studies read like any other. The dump is read and validated in full
before the store is opened, so a corrupt or foreign file never creates, locks or changes the store.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    from nomad_lab.cli.workspace_args import add_store_argument

    parser = subparsers.add_parser("store", help="the workspace store: import candidate dumps")
    actions = parser.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    importer = actions.add_parser("import", help="store a candidate dump (reference --dump JSON) as a run")
    importer.add_argument("dump", type=Path, help="candidate dump JSON")
    add_store_argument(importer)
    importer.set_defaults(func=run_import)


def run_import(args: argparse.Namespace) -> int:
    from nomad_lab.data.dump import load_dump
    from nomad_lab.store import Store

    dump = load_dump(args.dump)  # DumpError names the file and field; the store is not opened yet
    with Store(args.store) as store:
        run_id = store.import_dump(dump, source=str(args.dump))
    print(f"imported {len(dump['pools'])} pools from {args.dump} as run {run_id} into {args.store}")
    return 0
