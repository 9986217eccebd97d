"""``nomad-lab library build``: a tens-of-megabytes corpus of openly licensed documentation.

The library-scale study needs text at the size of a user's library; this writes it from installed
Debian documentation packages (and any folders given) with its provenance (``nomad_lab.data.library_corpus``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nomad_lab.cli.workspace_args import add_progress_argument


def register(subparsers: Any) -> None:
    from nomad_lab.core.workspace import PROJECT_ROOT
    from nomad_lab.data.library_corpus import DEBIAN_SOURCES

    parser = subparsers.add_parser("library", help="build a large openly licensed library corpus")
    sub = parser.add_subparsers(dest="library_command", metavar="LIBRARY_COMMAND", required=True)
    build = sub.add_parser("build", help="collect installed documentation packages into one corpus folder")
    build.add_argument(
        "--out",
        type=Path,
        default=PROJECT_ROOT / "runs" / "library",
        help="corpus folder to write (%(default)s)",
    )
    names = [s.name for s in DEBIAN_SOURCES]
    build.add_argument(
        "--source",
        nargs="*",
        choices=names,
        default=names,
        help="Debian documentation sources to include (default: all: %(default)s; none with a bare --source)",
    )
    build.add_argument(
        "--add",
        nargs="+",
        type=Path,
        default=[],
        metavar="DIR",
        help="also include the .md/.txt/.rst files here",
    )
    add_progress_argument(build)
    build.set_defaults(func=run_build)


def run_build(args: argparse.Namespace) -> int:
    from nomad_lab.data.library_corpus import DEBIAN_SOURCES, MANIFEST_NAME, MIN_DOC_BYTES, build_library

    sources = [s for s in DEBIAN_SOURCES if s.name in args.source]
    library = build_library(args.out, sources, args.add, progress=not args.no_progress)
    for source in library.sources:
        where = f"{source['package']} {source['version']}" if source["package"] else "folder"
        size = int(str(source["bytes"])) / 1e6
        print(f"{source['name']:>10}: {source['files']:>5} files, {size:6.1f} MB ({where})")
    print(
        f"library: {len(library.documents)} documents, {library.total_bytes / 1e6:.1f} MB "
        f"({library.skipped_short} files under {MIN_DOC_BYTES} bytes skipped); "
        f"provenance: {args.out / MANIFEST_NAME}"
    )
    return 0
