"""Each index kind gives the candidate net exact search gives, on vectors where the answer is known.

Exact is the yardstick: HNSW may only miss rows (and on a small index with a wide beam it misses none),
its scores are exact cosines (to the last float bits); a local Qdrant collection written from the
same rows returns the same rows
with the reference's threshold and filter; a server's collection returns payloads, which become
candidates whose document is resolved from the payload's ``source``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nomad_lab.retrieval.index_kinds import open_search
from nomad_lab.retrieval.index_kinds.search_exact import ExactSearch
from nomad_lab.retrieval.index_spec import parse_index_spec
from nomad_lab.store import ChunkRecord

pytest.importorskip("faiss")
pytest.importorskip("qdrant_client")


def vectors(n: int = 400, d: int = 32, seed: int = 7) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def chunk(i: int) -> ChunkRecord:
    return ChunkRecord(f"doc{i}#0", f"doc{i}", f"/lib/doc{i}.md", 0, 1, f"text {i}", "text", 6, f"{i:064x}")


def queries(matrix: np.ndarray, n: int = 25) -> np.ndarray:
    noise = np.random.default_rng(1).normal(scale=0.3, size=(n, matrix.shape[1])).astype(np.float32)
    return matrix[:n] + noise


def test_hnsw_with_a_wide_beam_equals_exact_and_scores_are_exact_cosines(tmp_path: Path) -> None:
    matrix = vectors()
    exact = ExactSearch(matrix)
    hnsw = open_search(parse_index_spec("hnsw?ef_search=400"), matrix, tmp_path, "idx")
    for q in queries(matrix):
        want = exact.hits(q, 15, 0.1)
        assert [h.row for h in hnsw.hits(q, 15, 0.1)] == [h.row for h in want]
        # the same formula over the chosen rows: equal but for the last float bits of a shorter product
        assert np.allclose([h.cosine for h in hnsw.hits(q, 15, 0.1)], [h.cosine for h in want], atol=1e-6)
    assert list(tmp_path.glob("idx-hnsw-m32-efc200.faiss"))  # the graph is cached for the next search


def test_hnsw_threshold_cuts_the_net(tmp_path: Path) -> None:
    matrix = vectors()
    hnsw = open_search(parse_index_spec("hnsw"), matrix, tmp_path, "idx")
    hits = hnsw.hits(queries(matrix)[0], 15, 0.5)
    assert hits and all(h.cosine >= 0.5 for h in hits)
    assert [h.cosine for h in hits] == sorted((h.cosine for h in hits), reverse=True)


def test_a_cached_graph_of_another_size_is_rebuilt(tmp_path: Path) -> None:
    open_search(parse_index_spec("hnsw"), vectors(50), tmp_path, "idx")
    rebuilt = open_search(parse_index_spec("hnsw"), vectors(80), tmp_path, "idx")
    assert rebuilt.graph.ntotal == 80


def test_local_qdrant_returns_the_rows_exact_search_returns(tmp_path: Path) -> None:
    matrix = vectors(200)
    rows = [chunk(i) for i in range(len(matrix))]
    search = open_search(parse_index_spec(f"qdrant:{tmp_path / 'q'}"), matrix, tmp_path, "idx", rows)
    exact = ExactSearch(matrix)
    try:
        for q in queries(matrix):
            got, want = search.hits(q, 15, 0.2), exact.hits(q, 15, 0.2)
            assert [h.row for h in got] == [h.row for h in want]
            assert np.allclose([h.cosine for h in got], [h.cosine for h in want], atol=1e-5)
        payload = search.client.retrieve("idx", ids=[3], with_payload=True)[0].payload
        assert payload["text"] == "text 3" and payload["source"] == "/lib/doc3.md" and payload["active"]
    finally:
        search.close()


def test_the_reference_filter_drops_inactive_points_and_other_collections(tmp_path: Path) -> None:
    from qdrant_client import QdrantClient, models

    from nomad_lab.retrieval.index_kinds.search_qdrant import QdrantSearch

    matrix = vectors(6, d=4)
    client = QdrantClient(path=str(tmp_path / "q"))
    client.create_collection(
        "kb", vectors_config=models.VectorParams(size=4, distance=models.Distance.COSINE)
    )
    payloads = [
        {"text": "kept", "source": "/a.md", "active": True, "collection": "docs"},
        {"text": "inactive", "source": "/b.md", "active": False, "collection": "docs"},
        {"text": "other tag", "source": "/c.md", "active": True, "collection": "elsewhere"},
        {"text": "no active field", "source": "/d.md", "collection": "docs"},
    ]
    client.upsert(
        "kb",
        points=[
            models.PointStruct(id=i, vector=matrix[0].tolist(), payload=p) for i, p in enumerate(payloads)
        ],
    )
    try:
        everything = QdrantSearch(client, "kb", None, remote=True).hits(matrix[0], 15, 0.3)
        assert {h.payload["text"] for h in everything} == {"kept", "other tag", "no active field"}
        tagged = QdrantSearch(client, "kb", "docs", remote=True).hits(matrix[0], 15, 0.3)
        assert {h.payload["text"] for h in tagged} == {"kept", "no active field"}
        assert all(h.row is None and h.payload["_point_id"] for h in tagged)
    finally:
        client.close()


def test_a_server_collection_becomes_candidates_resolved_to_corpus_documents(tmp_path: Path) -> None:
    """A server's hits carry no workspace row: each payload becomes a candidate, its document resolved
    from the payload's source path, its chunk id the point id (nothing read from the workspace index)."""
    from qdrant_client import QdrantClient

    from nomad_lab.data.corpus import IngestParams, load_corpus
    from nomad_lab.retrieval.index import RetrievalIndex, chunk_records
    from nomad_lab.retrieval.index_kinds.search_qdrant import QdrantSearch, write_collection
    from tests.support.paths import CORPUS

    corpus = load_corpus(CORPUS)
    params = IngestParams(embedding_model="test", embedding_dimension=16)
    records = chunk_records(corpus, params)
    matrix = vectors(len(records), d=16)
    client = QdrantClient(path=str(tmp_path / "q"))
    write_collection(client, "kb", matrix, records)
    search = QdrantSearch(client, "kb", "__nomad_eval__", remote=True)
    empty = np.zeros((0, 16), np.float32)
    index = RetrievalIndex("0" * 16, corpus, [], empty, None, params, search)  # type: ignore[arg-type]
    try:
        for row, record in enumerate(records):
            (best, *_) = index.dense(matrix[row], 15, -1.0)
            assert best.doc_id == record.doc_id and best.text == record.text
            assert best.chunk_id == str(row) and best.keywords == record.keywords
    finally:
        client.close()
