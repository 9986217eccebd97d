"""The ``nomad-lab`` command: one argparse tree whose leaves call the same functions a notebook does.

Each command module exposes ``register(subparsers)``, which adds its parser and sets ``func`` to a
callable taking the parsed namespace and returning an exit code. Command modules keep heavy imports
(torch, llama.cpp) inside their functions so ``nomad-lab --help`` stays quick; the one exception is
the study modules, whose declared parameters the ``study`` and ``sweep`` parsers are generated from
(they import numpy, DuckDB and scipy, through ``gate.stats``).

Errors: a ``NomadLabError`` (bad golden, dump, spec or store, missing model, backend down) is printed
as ``nomad-lab: error: <message>`` without a traceback and exits 1, since its message already says
what to fix; anything else is a bug and keeps its traceback. ``NOMAD_LAB_DEBUG=1`` shows the traceback
of both.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from nomad_lab.core.errors import DEBUG_ENV, NomadLabError

# Top-level commands and the `eval` group, by module. Add a module here to add a command.
COMMAND_MODULES: list[str] = [
    "nomad_lab.cli.serve",
    "nomad_lab.cli.sweep",
    "nomad_lab.cli.gate",
    "nomad_lab.cli.study",
    "nomad_lab.cli.first_steps",
    "nomad_lab.cli.reproduce",
    "nomad_lab.cli.store",
    "nomad_lab.cli.floors",
    "nomad_lab.cli.library",
    "nomad_lab.cli.goldens",
]
EVAL_MODULES: list[str] = [
    "nomad_lab.cli.eval_check",
    "nomad_lab.cli.eval_corpus",
    "nomad_lab.cli.eval_retrieval",
    "nomad_lab.cli.eval_generation",
    "nomad_lab.cli.eval_compare",
]


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree; every option carries help text (tests/cli/test_options.py walks it)."""
    from importlib.metadata import version

    parser = argparse.ArgumentParser(prog="nomad-lab", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {version('nomad-lab')}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    if EVAL_MODULES:
        eval_parser = sub.add_parser("eval", help="evaluation harness (retrieval, generation, compare)")
        eval_sub = eval_parser.add_subparsers(dest="eval_command", metavar="EVAL_COMMAND")
        for name in EVAL_MODULES:
            importlib.import_module(name).register(eval_sub)
        eval_parser.set_defaults(func=lambda _args: _usage(eval_parser))
    return parser


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    # the step's own command line, for its provenance
    from nomad_lab.eval.provenance import running

    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(argv)  # a spec option's type raises NomadLabError for a refused spec
        func = getattr(args, "func", None)
        if func is None:
            return _usage(parser)
        with running(["nomad-lab", *argv]):
            return int(func(args) or 0)
    except NomadLabError as exc:
        if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
            raise
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
