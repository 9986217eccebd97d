"""The index tables: ``indexes`` + ``chunks`` keyed by corpus fingerprint, and the embeddings cache.

``embeddings`` is keyed by (embedder key, SHA-256 of the chunk text), so re-chunking one document or building
the no-distractor index re-embeds only new text; ``embedding_models`` records each key's vector dimension.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

import numpy as np

from nomad_lab.store.records import ChunkRecord, IndexRecord
from nomad_lab.store.schema import EMBEDDING_DIMENSION
from nomad_lab.store.tables import StoreError, TableGroup

__all__ = ["IndexTables"]


_CHUNK_TYPES = ("VARCHAR",) * 4 + ("INTEGER",) * 2 + ("VARCHAR",) * 2 + ("INTEGER", "VARCHAR")


class IndexTables(TableGroup):
    """Methods of :class:`nomad_lab.store.Store` over ``indexes``, ``chunks`` and the embeddings cache."""

    def get_index(self, fingerprint: str) -> IndexRecord | None:
        row = self.con.execute(
            "SELECT fingerprint, corpus_dir, doc_count, chunk_count, model_key, params, build_seconds, "
            "created_at FROM indexes WHERE fingerprint = ?",
            [fingerprint],
        ).fetchone()
        if row is None:
            return None
        return IndexRecord(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]), row[6], row[7])

    def relocate_index(self, fingerprint: str, corpus_dir: str) -> None:
        """Record that the index of ``fingerprint`` was last opened over the corpus in ``corpus_dir``.

        The fingerprint covers the documents, not where they live, so a workspace that moved (another
        checkout, a store carried to a new disk) reuses the index; a run read back later (its bank
        retrieved again over the run's corpus) must find the corpus where it is now, not where it was
        first built."""
        self.con.execute("UPDATE indexes SET corpus_dir = ? WHERE fingerprint = ?", [corpus_dir, fingerprint])

    def get_chunks(self, fingerprint: str) -> list[ChunkRecord]:
        rows = self.con.execute(
            "SELECT chunk_id, doc_id, source, chunk_index, total_chunks, text, keywords, char_count, "
            "text_sha256 FROM chunks WHERE fingerprint = ? ORDER BY doc_id, chunk_index",
            [fingerprint],
        ).fetchall()
        return [ChunkRecord(*row) for row in rows]

    def put_index(self, index: IndexRecord, chunks: Sequence[ChunkRecord]) -> None:
        """Replace the index of ``index.fingerprint`` with these chunks (the embeddings must be stored)."""
        with self.transaction():
            self.con.execute("DELETE FROM chunks WHERE fingerprint = ?", [index.fingerprint])
            self.con.execute("DELETE FROM indexes WHERE fingerprint = ?", [index.fingerprint])
            self.con.execute(
                "INSERT INTO indexes VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    index.fingerprint,
                    index.created_at or datetime.now(UTC),
                    index.corpus_dir,
                    index.doc_count,
                    index.chunk_count,
                    index.model_key,
                    json.dumps(index.params),
                    index.build_seconds,
                ],
            )
            rows = [
                [index.fingerprint, c.chunk_id, c.doc_id, c.source, c.chunk_index, c.total_chunks, c.text,
                 c.keywords, c.char_count, c.text_sha256]
                for c in chunks
            ]  # fmt: skip
            self.insert_rows("INSERT INTO chunks", _CHUNK_TYPES, rows)

    def cached_embedding_keys(self, model_key: str, text_sha256s: Iterable[str]) -> set[str]:
        """Which of these text hashes already have a vector for this embedder."""
        wanted = list(dict.fromkeys(text_sha256s))
        if not wanted:
            return set()
        rows = self.con.execute(
            "SELECT text_sha256 FROM embeddings WHERE model_key = ? AND text_sha256 IN (SELECT unnest(?))",
            [model_key, wanted],
        ).fetchall()
        return {row[0] for row in rows}

    def embedding_dimension(self, model_key: str) -> int | None:
        """The dimension recorded for this model key's vectors, or None when it has none yet."""
        if self.found_version < 3:  # a read-only older store: FLOAT[384] throughout
            row = self.con.execute(
                "SELECT 1 FROM embeddings WHERE model_key = ? LIMIT 1", [model_key]
            ).fetchone()
            return None if row is None else EMBEDDING_DIMENSION
        row = self.con.execute(
            "SELECT dimension FROM embedding_models WHERE model_key = ?", [model_key]
        ).fetchone()
        return None if row is None else int(row[0])

    def put_embeddings(self, model_key: str, text_sha256s: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors under a model key; the first write records its dimension, later ones must match
        (a mismatch is refused and nothing is written)."""
        if len(text_sha256s) != len(vectors):
            raise ValueError("one vector per text hash")
        if not len(vectors):
            return
        recorded = self.embedding_dimension(model_key)
        if recorded is not None and vectors.shape[1] != recorded:
            raise StoreError(
                f"{self.path}: vectors have dimension {vectors.shape[1]}, the store holds "
                f"{recorded}-dimensional vectors for {model_key.split('|')[0]}; nothing was written"
            )
        with self.transaction():
            if recorded is None:
                self.con.execute(
                    "INSERT INTO embedding_models VALUES (?, ?, ?)",
                    [model_key, int(vectors.shape[1]), datetime.now(UTC)],
                )
            lists = vectors.astype(np.float32).tolist()
            rows = [[model_key, sha, v] for sha, v in zip(text_sha256s, lists, strict=True)]
            self.insert_rows("INSERT OR REPLACE INTO embeddings", ("VARCHAR", "VARCHAR", "FLOAT[]"), rows)

    def get_embeddings(self, model_key: str, text_sha256s: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of these text hashes for this embedder (absent hashes are left out)."""
        wanted = list(dict.fromkeys(text_sha256s))
        if not wanted:
            return {}
        result = self.con.execute(
            "SELECT text_sha256, vector FROM embeddings "
            "WHERE model_key = ? AND text_sha256 IN (SELECT unnest(?))",  # a hash join, not n x m
            [model_key, wanted],
        ).fetchnumpy()
        return {
            sha: np.asarray(v, dtype=np.float32)
            for sha, v in zip(result["text_sha256"], result["vector"], strict=True)
        }

    def index_matrix(self, fingerprint: str, model_key: str) -> tuple[list[ChunkRecord], np.ndarray]:
        """The chunks of an index and their vectors as one ``(n, dim)`` float32 matrix, in chunk order."""
        chunks = self.get_chunks(fingerprint)
        result = self.con.execute(
            "SELECT c.chunk_id, e.vector FROM chunks c JOIN embeddings e "
            "ON e.text_sha256 = c.text_sha256 AND e.model_key = ? WHERE c.fingerprint = ?",
            [model_key, fingerprint],
        ).fetchnumpy()
        by_id = dict(zip(result["chunk_id"], result["vector"], strict=True))
        missing = [c.chunk_id for c in chunks if c.chunk_id not in by_id]
        if missing:
            raise StoreError(
                f"{self.path}: index {fingerprint} lacks vectors for {len(missing)} chunk(s), "
                f"e.g. {missing[0]}"
            )
        matrix = (
            np.stack([by_id[c.chunk_id] for c in chunks]).astype(np.float32)
            if chunks
            else np.zeros((0, self.embedding_dimension(model_key) or 0), dtype=np.float32)
        )
        return chunks, matrix
