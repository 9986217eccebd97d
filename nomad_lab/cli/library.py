"""``nomad-lab library build``: a tens-of-megabytes corpus of openly licensed documentation.

The library-scale study needs text at the size of a user's library; this writes it from installed
Debian documentation packages (and any folders given) with its provenance (``nomad_lab.data.library_corpus``).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from nomad_lab.cli.workspace_args import add_cluster_arguments, add_progress_argument
from nomad_lab.core.errors import NomadLabError


def register(subparsers: Any) -> None:
    from nomad_lab.cli.study import add_param
    from nomad_lab.core.workspace import PROJECT_ROOT
    from nomad_lab.data.library_corpus import DEBIAN_SOURCES
    from nomad_lab.data.library_large import ALL_SOURCES
    from nomad_lab.retrieval.embedder_spec import EMBEDDER_SPEC
    from nomad_lab.studies.params import STORE

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
    more = [s.name for s in ALL_SOURCES if s.name not in names]
    build.add_argument(
        "--source",
        nargs="*",
        choices=names + more,
        default=names,
        help="Debian documentation sources to include (default: %(default)s, about 50 MB; the large "
        f"library adds {' '.join(more)}; none with a bare --source)",
    )
    build.add_argument(
        "--add",
        nargs="+",
        type=Path,
        default=[],
        metavar="DIR",
        help="also include the .md/.txt/.rst files here",
    )
    build.add_argument(
        "--embedder",
        type=EMBEDDER_SPEC,
        metavar="SPEC",
        default=None,
        help="also index the library: chunk it and embed every chunk the store lacks with this embedder "
        "(on Dask workers with --workers/--scheduler); a rerun embeds only what is missing",
    )
    add_param(build, STORE)  # the library's embeddings are cached there, by chunk hash
    build.add_argument(
        "--no-collect",
        action="store_true",
        help="index the --out folder as an earlier build left it (reading no package again)",
    )
    build.add_argument("--batch", type=int, default=256, help="chunks per Dask task (%(default)s)")
    add_cluster_arguments(build)
    add_progress_argument(build)
    build.set_defaults(func=run_build)


def run_build(args: argparse.Namespace) -> int:
    from nomad_lab.data.library_corpus import MANIFEST_NAME, MIN_DOC_BYTES, build_library
    from nomad_lab.data.library_large import ALL_SOURCES

    if args.no_collect:
        if not args.embedder:
            raise NomadLabError("--no-collect: give --embedder SPEC (there is nothing else to do)")
        index_library(args)
        return 0
    sources = [s for s in ALL_SOURCES if s.name in args.source]
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
    if args.embedder:
        index_library(args)
    return 0


def index_library(args: argparse.Namespace) -> None:
    """Chunk the library folder and embed what ``--store`` lacks, here or on Dask workers."""
    from nomad_lab.data.corpus import load_corpus
    from nomad_lab.eval import machine_load
    from nomad_lab.retrieval.embedding import load_embedder
    from nomad_lab.retrieval.index import build_index
    from nomad_lab.runners.cluster import dask_client
    from nomad_lab.runners.library_build import dask_fill
    from nomad_lab.store import Store

    if args.batch < 1:
        raise NomadLabError(f"--batch: must be positive, got {args.batch}")
    corpus = load_corpus(args.out)
    embedder = load_embedder(args.embedder)
    start = machine_load.mark()
    with dask_client(args.scheduler, args.workers) as client, Store(args.store) as store:
        threads = max(1, (os.cpu_count() or 1) // args.workers) if args.workers else None
        fill = dask_fill(client, args.batch, threads=threads) if client is not None else None
        _, stats = build_index(corpus, store, embedder, progress=not args.no_progress, fill=fill)
    where = f"{args.workers} local worker(s)" if args.workers else (args.scheduler or "this process")
    rate = f", {stats.embedded / stats.seconds:.1f} chunks/s" if stats.embedded and stats.seconds else ""
    record_build(args, stats, machine_load.load_between(start, machine_load.mark()))
    print(
        f"index {stats.fingerprint}: {stats.chunks} chunks, {stats.embedded} embedded on {where}, "
        f"{stats.reused} from the cache, {stats.seconds:.1f} s{rate}; store {args.store}"
    )


def record_build(args: argparse.Namespace, stats: Any, load: dict[str, Any]) -> None:
    """Beside the library's manifest, what its last index build per embedder did and how busy the
    machine was meanwhile (``index_builds.json``): the library-size page quotes a build's time from here,
    and only as a cost when it was quiet."""
    import json

    from nomad_lab.data.library_corpus import BUILDS_NAME

    path = args.out / BUILDS_NAME
    builds = json.loads(path.read_text()) if path.exists() else {}
    builds[args.embedder] = {
        "fingerprint": stats.fingerprint,
        "chunks": stats.chunks,
        "embedded": stats.embedded,
        "reused": stats.reused,
        "seconds": round(stats.seconds, 2),
        "chunksPerSecond": round(stats.embedded / stats.seconds, 2) if stats.embedded else None,
        "workers": args.workers,
        "scheduler": args.scheduler,
        "batch": args.batch,
        "store": str(args.store),
        "load": load,
    }
    path.write_text(json.dumps(builds, indent=1) + "\n")
