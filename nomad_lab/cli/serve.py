"""``nomad-lab serve``: run the Ollama-API shim over an embedded GGUF, and optionally a local embedder.

Why a command: notebooks and external tools (and the seed's own client) can then talk to a real model
through Ollama's native API on a machine where Ollama itself cannot be installed. With ``--embed SPEC`` it
also answers ``/api/embed`` and ``/v1/embeddings``, so ``ollama://`` and ``openai://`` embedder specs run
against real vectors over real HTTP.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    from nomad_lab.cli.study import forms_line
    from nomad_lab.retrieval.embedder_spec import EMBEDDER_SPEC
    from nomad_lab.serve.ollama_server import add_arguments

    parser = subparsers.add_parser(
        "serve", help="serve an embedded model over the Ollama API (/api/chat, /api/embed, /v1)"
    )
    add_arguments(parser)
    parser.add_argument(
        "--embed",
        metavar="SPEC",
        help="also serve this embedder on /api/embed and /v1/embeddings; one of: "
        + forms_line(EMBEDDER_SPEC),
    )
    parser.add_argument(
        "--embed-name", help="embedding model name to advertise (default: derived from --embed)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nomad_lab.retrieval.embedder_spec import parse_embedder_spec
    from nomad_lab.retrieval.embedding import load_embedder
    from nomad_lab.serve.embed_routes import EmbedModel
    from nomad_lab.serve.ollama_server import serve

    embed_model = None
    if args.embed:
        embedder = load_embedder(parse_embedder_spec(args.embed))
        name = args.embed_name or embedder.name.rsplit("/", 1)[-1].lower()
        embed_model = EmbedModel(name, lambda texts: embedder.embed(texts, kind="raw"), embedder.model_key)
    return serve(args, embed_model)
