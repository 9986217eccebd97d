"""The same transport checks as ``test_ollama_protocol.py``, against a real Ollama (set OLLAMA_HOST).

A real server does not show us what it received, so the request bodies are captured on the client
side, from the HTTP requests the ``ollama`` and ``openai`` clients actually sent. Pick the model with
OLLAMA_TEST_MODEL (default: the first installed model whose name does not contain "embed").
Skipped, with the reason shown, when OLLAMA_HOST is not set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

import httpx
import httpx2
import pytest

from nomad_lab.backends.ollama_native import OllamaBackend
from nomad_lab.studies.budgeting.transport import base_url
from tests.support.ollama_checks import CHECKS, Target

HOST = os.environ.get("OLLAMA_HOST", "").strip()
if not HOST:
    pytest.skip("OLLAMA_HOST is not set: no real Ollama server to test against", allow_module_level=True)


# The suite blocks every non-loopback connection (pytest-socket); this module may also reach OLLAMA_HOST.
pytestmark = [
    pytest.mark.live,
    pytest.mark.slow,
    pytest.mark.allow_hosts(["127.0.0.1", "::1", "localhost", urlparse(base_url(HOST)).hostname or ""]),
]


@pytest.fixture(scope="module")
def live() -> Target:
    base = base_url(HOST)
    try:
        httpx.get(f"{base}/api/version", timeout=5).raise_for_status()
    except httpx.HTTPError as exc:
        pytest.skip(f"OLLAMA_HOST={HOST} does not answer: {exc}")
    model = os.environ.get("OLLAMA_TEST_MODEL") or next(
        (m.name for m in OllamaBackend(base).list_models() if "embed" not in m.name), ""
    )
    if not model:
        pytest.skip(f"the Ollama at {base} has no chat model installed")
    wire: list[tuple[str, dict[str, Any]]] = []

    def record(request: Any) -> None:  # runs for every request either client sends
        if request.method == "POST" and request.content:
            wire.append((request.url.path, json.loads(request.content)))

    return Target(
        base,
        model,
        sent=lambda path: [body for p, body in wire if p == path],
        clear=wire.clear,
        client_kwargs={"event_hooks": {"request": [record]}},
        compat_kwargs={"http_client": httpx2.Client(event_hooks={"request": [record]})},
    )


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
def test_live(live: Target, check: Callable[[Target], None]) -> None:
    check(live)
