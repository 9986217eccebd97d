"""The ``ollama://`` embedder against a real Ollama (set OLLAMA_HOST; OLLAMA_EMBED_MODEL, default
nomic-embed-text, must be pulled). Skipped, with the reason shown, when OLLAMA_HOST is not set."""

from __future__ import annotations

import os
from urllib.parse import urlparse

import numpy as np
import pytest

from nomad_lab.retrieval.embedder_spec import parse_embedder_spec
from nomad_lab.retrieval.embedding import open_embedder
from nomad_lab.studies.budgeting.transport import base_url

HOST = os.environ.get("OLLAMA_HOST", "").strip()
if not HOST:
    pytest.skip("OLLAMA_HOST is not set: no real Ollama server to test against", allow_module_level=True)

BASE = base_url(HOST)
pytestmark = [
    pytest.mark.live,
    pytest.mark.slow,
    pytest.mark.allow_hosts(["127.0.0.1", "::1", "localhost", urlparse(BASE).hostname or ""]),
]


def test_a_real_ollama_embeds_with_the_reference_prefixes() -> None:
    model = os.environ.get("OLLAMA_EMBED_MODEL", "nomic-embed-text")
    parts = urlparse(BASE)
    embedder = open_embedder(parse_embedder_spec(f"ollama://{parts.hostname}:{parts.port or 11434}/{model}"))
    assert embedder.model_version.startswith("digest:") and embedder.dimension > 0
    texts = ["Boil water for one minute to purify it.", "The Eiffel Tower is in Paris."]
    documents = embedder.embed(texts)
    query = embedder.embed_query("How do I purify water?")
    assert np.allclose(np.linalg.norm(documents, axis=1), 1, atol=1e-5)
    assert float(documents[0] @ query) > float(documents[1] @ query)  # the relevant text is nearer
