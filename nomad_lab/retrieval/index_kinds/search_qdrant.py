"""Qdrant search as the reference does it: a collection's points with the reference's payload layout,
``query_points`` with ``limit = top_k * 3``, the score threshold and its payload filter (SPEC §2.2 step 4:
``must_not: active == false``, plus ``must: collection == NAME`` when a collection tag is given).

Two places a collection lives:

- **local mode** (``qdrant`` / ``qdrant:DIR``): ``qdrant-client``'s embedded store, the same API as a
  server and no server to run. The workspace index is written into it once (point id = the index row,
  payload as the reference's ingest writes it), so its pools can be compared with exact search row for row;
- **a server** (``qdrant://HOST:PORT/COLLECTION``): a knowledge server's own collection, searched with
  the query vectors of the server's own embedder. Nothing is written and nothing is embedded but the
  questions: each hit's payload becomes the candidate, its document resolved from its ``source`` path.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.retrieval.index_kinds import Hit
from nomad_lab.retrieval.index_spec import IndexSpec

__all__ = ["EVAL_COLLECTION_TAG", "QdrantSearch", "reference_payload"]

EVAL_COLLECTION_TAG = "__nomad_eval__"
"""The reference's payload tag on eval documents (SPEC §2.1); written on every point of a local collection."""
UPSERT_BATCH = 512


def reference_payload(chunk: Any, created_at: str) -> dict[str, Any]:
    """The payload the reference's ingest stores for a chunk (SPEC §2.6), from a workspace chunk record."""
    return {
        "text": chunk.text,
        "source": chunk.source,
        "keywords": chunk.keywords,
        "chunk_index": chunk.chunk_index,
        "total_chunks": chunk.total_chunks,
        "char_count": chunk.char_count,
        "created_at": created_at,
        "document_id": chunk.doc_id,
        "active": True,
        "collection": EVAL_COLLECTION_TAG,
    }


def _reference_filter(collection_tag: str | None) -> Any:
    from qdrant_client import models  # heavy: the client and its generated models

    inactive = models.FieldCondition(key="active", match=models.MatchValue(value=False))
    must = None
    if collection_tag:
        must = [models.FieldCondition(key="collection", match=models.MatchValue(value=collection_tag))]
    return models.Filter(must_not=[inactive], must=must)


class QdrantSearch:
    """``query_points`` on one collection with the reference's limit, threshold and filter."""

    def __init__(self, client: Any, collection: str, collection_tag: str | None, remote: bool) -> None:
        self.client = client
        self.collection = collection
        self.filter = _reference_filter(collection_tag)
        self.remote = remote

    @classmethod
    def open(
        cls, spec: IndexSpec, matrix: np.ndarray, cache_dir: Path, name: str, rows: Any = None
    ) -> QdrantSearch:
        """A server's collection (read-only, checked to exist), or the local collection of this index,
        written from ``matrix`` and ``rows`` unless it already holds every row."""
        from qdrant_client import QdrantClient  # heavy: the client

        tag = str(spec.options.get("collection") or "") or None
        if spec.remote:
            key_env = str(spec.options.get("api_key_env") or "")
            client = QdrantClient(url=spec.url, api_key=os.environ.get(key_env) if key_env else None)
            try:
                client.get_collection(spec.collection)
            except Exception as exc:  # any transport or API error: one line naming the server
                raise NomadLabError(
                    f"--index {spec.text}: cannot read collection {spec.collection!r} at {spec.url} ({exc})"
                ) from None
            return cls(client, spec.collection, tag, remote=True)
        folder = Path(spec.path) if spec.path else cache_dir / "qdrant"
        folder.mkdir(parents=True, exist_ok=True)
        client = QdrantClient(path=str(folder))
        write_collection(client, name, matrix, rows or [])
        return cls(client, name, tag, remote=False)

    def hits(self, query_vector: np.ndarray, limit: int, threshold: float) -> list[Hit]:
        if limit <= 0:
            return []
        found = self.client.query_points(
            self.collection,
            query=[float(x) for x in query_vector],
            limit=limit,
            score_threshold=threshold,
            query_filter=self.filter,
            with_payload=True,
        ).points
        if self.remote:
            return [Hit(None, float(p.score), {**(p.payload or {}), "_point_id": str(p.id)}) for p in found]
        return [Hit(int(p.id), float(p.score)) for p in found]

    def close(self) -> None:
        self.client.close()


def write_collection(client: Any, name: str, matrix: np.ndarray, rows: Any) -> None:
    """Create collection ``name`` (cosine, the matrix's dimension) and upsert every row with its payload,
    in batches; a collection that already holds every row is left as it is."""
    from qdrant_client import models  # heavy: the client and its generated models

    if client.collection_exists(name):
        if client.count(name, exact=True).count == len(matrix):
            return
        client.delete_collection(name)
    client.create_collection(
        name, vectors_config=models.VectorParams(size=int(matrix.shape[1]), distance=models.Distance.COSINE)
    )
    created_at = datetime.datetime.now(datetime.UTC).isoformat()
    for begin in range(0, len(matrix), UPSERT_BATCH):
        end = min(begin + UPSERT_BATCH, len(matrix))
        client.upsert(
            name,
            points=[
                models.PointStruct(
                    id=i, vector=[float(x) for x in matrix[i]], payload=reference_payload(rows[i], created_at)
                )
                for i in range(begin, end)
            ],
            wait=True,
        )
