"""The native Ollama transport against a protocol-faithful Ollama API server with a real model.

The server (``nomad_lab.serve.ollama_server``, a subprocess over llama.cpp with SmolLM2-135M-Instruct)
records every request body, so these tests assert what arrived on the wire: ``options.num_ctx``,
``num_predict``, temperature, seed, ``keep_alive`` and ``format`` as sent, and never ``num_ctx`` on the
``/v1`` path. The checks are plain functions over a ``Target`` so ``test_ollama_live.py`` runs the very
same ones against a real Ollama.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from tests.support.ollama_checks import CHECKS, HTTP_TIMEOUT, Target


@pytest.mark.slow
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
def test_shim(shim: Target, check: Callable[[Target], None]) -> None:
    check(shim)


@pytest.mark.slow
def test_shim_speaks_ollama_shapes(shim: Target) -> None:
    tags = httpx.get(f"{shim.base_url}/api/tags").json()["models"][0]
    assert {"name", "model", "modified_at", "size", "digest", "details"} <= set(tags)
    show = httpx.post(f"{shim.base_url}/api/show", json={"model": shim.model}).json()
    assert {"parameters", "template", "details", "model_info", "capabilities"} <= set(show)
    assert httpx.post(f"{shim.base_url}/api/show", json={"model": "nope"}).status_code == 404
    lines = []
    with httpx.stream(
        "POST",
        f"{shim.base_url}/api/chat",
        timeout=HTTP_TIMEOUT,
        json={
            "model": shim.model,
            "messages": [{"role": "user", "content": "Hi"}],
            "options": {"num_predict": 3},
        },
    ) as response:  # no "stream" field: Ollama streams by default
        assert response.headers["content-type"].startswith("application/x-ndjson")
        lines = [json.loads(line) for line in response.iter_lines() if line]
    assert lines[-1]["done"] and lines[-1]["prompt_eval_count"] > 0 and lines[-1]["eval_count"] > 0
    assert all(not line["done"] for line in lines[:-1])
