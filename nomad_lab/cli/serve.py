"""``nomad-lab serve``: run the Ollama-API shim over an embedded GGUF.

Why a command: notebooks and external tools (and the seed's own client) can then talk to a real model
through Ollama's native API on a machine where Ollama itself cannot be installed.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    from nomad_lab.backends.ollama_server import add_arguments

    parser = subparsers.add_parser(
        "serve", help="serve an embedded model over the Ollama API (/api/chat, /v1)"
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nomad_lab.backends.ollama_server import serve

    return serve(args)
