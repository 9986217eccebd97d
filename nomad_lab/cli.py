"""The ``nomad-lab`` command: one argparse tree whose leaves call the same functions a notebook does.

Each command module exposes ``register(subparsers)``, which adds its parser and sets ``func`` to a
callable taking the parsed namespace and returning an exit code. Command modules keep heavy imports
(torch, duckdb, llama.cpp) inside their functions so ``nomad-lab --help`` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Top-level commands and the `eval` group, by module. Add a module here to add a command.
COMMAND_MODULES: list[str] = [
    "nomad_lab.commands.serve",
    "nomad_lab.commands.sweep",
    "nomad_lab.commands.study",
    "nomad_lab.commands.reproduce",
]
EVAL_MODULES: list[str] = [
    "nomad_lab.commands.eval_check",
    "nomad_lab.commands.eval_retrieval",
    "nomad_lab.commands.eval_compare",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nomad-lab", description=__doc__.splitlines()[0])
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
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        return _usage(parser)
    return int(func(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
