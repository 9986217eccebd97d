"""``--index qdrant://HOST:PORT/COLLECTION`` against a real Qdrant server (set QDRANT_URL, e.g.
``http://127.0.0.1:6333``). Skipped, with the reason shown, when QDRANT_URL is not set: no Qdrant server
installs here, and local mode (the other tests) is the same client API.

The test writes its own collection (a name of its own, deleted at the end) in the reference's payload
layout from the fixture corpus's workspace index, then retrieves through the server exactly as the
reference searches, and checks every question's top 5 against exact search. The workbench itself never
writes to a server's collection: only this test's setup does.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pytest

URL = os.environ.get("QDRANT_URL", "").strip()
if not URL:
    pytest.skip("QDRANT_URL is not set: no real Qdrant server to test against", allow_module_level=True)

pytest.importorskip("qdrant_client")
pytestmark = [
    pytest.mark.live,
    pytest.mark.allow_hosts(["127.0.0.1", "::1", "localhost", urlparse(URL).hostname or ""]),
]


def test_a_server_collection_reproduces_exact_top_5(tmp_path: Path, embedder) -> None:
    from qdrant_client import QdrantClient

    from nomad_lab.retrieval.index_kinds.search_qdrant import write_collection
    from nomad_lab.store import Store
    from tests.support.retrieval import fixture_run

    store = tmp_path / "s.duckdb"
    exact = fixture_run(store, embedder)
    with Store(store, read_only=True) as opened:
        fingerprint = opened.get_run(exact).fingerprint
        chunks, matrix = opened.index_matrix(fingerprint, embedder.model_key)
    name = f"nomad_lab_test_{uuid.uuid4().hex[:8]}"
    client = QdrantClient(url=URL)
    try:
        write_collection(client, name, matrix, chunks)
        parts = urlparse(URL)
        served = fixture_run(store, embedder, index=f"qdrant://{parts.hostname}:{parts.port or 6333}/{name}")
        with Store(store, read_only=True) as opened:
            a, b = opened.get_pools(exact), opened.get_pools(served)
        assert a.keys() == b.keys()
        for question, pool in a.items():
            # a server's hits carry its point ids, not our chunk ids: compare by document and cosine
            assert [(p.doc_id, round(p.semantic_score, 5)) for p in b[question][:5]] == [
                (p.doc_id, round(p.semantic_score, 5)) for p in pool[:5]
            ], question
    finally:
        client.delete_collection(name)
        client.close()
        shutil.rmtree(tmp_path, ignore_errors=True)
