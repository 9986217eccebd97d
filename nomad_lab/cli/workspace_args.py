"""The workspace options of every command (``--corpus``, ``--goldens``, ``--store`` …), declared once.

Why: ``--corpus``, ``--goldens``, ``--suite``, ``--no-distractors``, ``--report``, ``--store`` and
``--no-progress`` mean the same thing in every command; declared per command they drift (names, help
texts, defaults). Every command that reads the corpus takes ``--corpus`` (and ``--goldens`` when it reads
golden suites) from here, every command that touches the store takes ``--store`` from here. The cluster
options (``--scheduler``, ``--workers``) are shared the same way by every command that can run its grid
on Dask. Each option is generated from its declaration in :mod:`nomad_lab.studies.params`, the one the
studies use, so a study's ``--corpus`` and ``eval retrieval``'s cannot differ.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_corpus_arguments(parser: argparse.ArgumentParser, *, goldens: bool = True) -> None:
    """``--corpus``, and ``--goldens`` unless the command reads documents only (``goldens=False``)."""
    from nomad_lab.cli.study import add_param
    from nomad_lab.studies.params import CORPUS, GOLDENS

    add_param(parser, CORPUS)
    if goldens:
        add_param(parser, GOLDENS)


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """``--store``: every command that reads or writes the workspace store."""
    from nomad_lab.cli.study import add_param
    from nomad_lab.studies.params import STORE

    add_param(parser, STORE)


def add_stored_run_argument(parser: argparse.ArgumentParser, what: str | None = None) -> None:
    """``--run RUN``: the stored retrieval run a command reads (a run id, ``main`` or ``latest``, the
    default), refused at the edge when malformed and resolved by
    :func:`nomad_lab.eval.gating.runs.resolve_run`; ``what`` says what the command reads it for."""
    from dataclasses import replace

    from nomad_lab.cli.study import add_param
    from nomad_lab.studies.gating.run_param import STORED_RUN, stored_run_help

    add_param(parser, STORED_RUN if what is None else replace(STORED_RUN, help=stored_run_help(what)))


def add_progress_argument(parser: argparse.ArgumentParser) -> None:
    """``--no-progress``: every command that shows progress bars."""
    from nomad_lab.cli.study import add_param
    from nomad_lab.studies.params import PROGRESS

    add_param(parser, PROGRESS)


def add_workspace_arguments(parser: argparse.ArgumentParser, *, report_what: str = "reports") -> None:
    """Corpus and goldens locations, suite selection, distractors, reports, store and progress bars."""
    from nomad_lab.core.workspace import DEFAULT_REPORTS_DIR

    add_corpus_arguments(parser)
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
    add_store_argument(parser)
    add_progress_argument(parser)


def workspace_config(args: argparse.Namespace) -> dict[str, Any]:
    """The parsed workspace options as the keyword arguments every eval config and study takes."""
    config = {
        "corpus_dir": args.corpus,
        "goldens_dir": args.goldens,
        "store_path": args.store,
        "progress": not args.no_progress,
    }
    if hasattr(args, "report"):
        config |= {"report_dir": args.report, "include_distractors": not args.no_distractors}
    return config


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """Where a grid runs: here (default), a LocalCluster of N processes, or a running Dask scheduler."""
    from nomad_lab.cli.study import add_param
    from nomad_lab.studies.params import CLUSTER

    where = parser.add_mutually_exclusive_group()
    for param in CLUSTER:
        add_param(where, param)


def add_embedder_argument(parser: argparse.ArgumentParser) -> None:
    """``--embedder SPEC`` and ``--index SPEC``: which model embeds the corpus and the queries (the floor
    depends on it), and which index the candidate net is searched in."""
    from nomad_lab.cli.study import add_param
    from nomad_lab.studies.params import EMBEDDER, INDEX

    add_param(parser, EMBEDDER)
    add_param(parser, INDEX)
