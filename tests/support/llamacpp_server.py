"""A real ``llama_cpp.server`` (OpenAI-compatible) over SmolLM2-135M on 127.0.0.1, and a passage to judge."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from nomad_lab.backends.models import smollm2_path
from nomad_lab.core.cpu_threads import cpu_threads
from nomad_lab.serve.process import ServerProcess, free_port

BURN = [
    {
        "text": "For a minor burn, hold the skin under cool running water for about twenty minutes. "
        "Do not use ice, butter or toothpaste."
    }
]


@contextmanager
def llama_server(alias: str, *, logits_all: bool) -> Iterator[str]:
    """The server's base URL (``http://127.0.0.1:PORT``); ``logits_all`` is what logprobs need."""
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(smollm2_path()),
        "--model_alias",
        alias,
        "--n_ctx",
        "2048",
        "--n_threads",
        str(cpu_threads()),
        "--logits_all",
        "true" if logits_all else "false",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with ServerProcess(argv, host="127.0.0.1", port=port, ready_path="/v1/models") as server:
        yield server.base_url
