"""Candidate-pool files (:mod:`nomad_lab.data.pool_format`) stored as runs, and their named score columns.

Why columns, not rows: a pool file of 10^5 questions holds a million candidates, and a row-by-row insert
of ten thousand rows took a minute (``cache_files``); each table here is filled by one statement that
scans numpy arrays, inside one transaction, so an import stores all of a file or none of it.

An imported run's corpus fingerprint is derived from the chunks the file holds (their ids and texts),
so the passages it carries are stored as that "index"'s chunks, where judges, rerankers and coverage
read passages for any run, and a second import of the same file shares them. The stack's own corpus
fingerprint, embedder identity and columns are kept in the run's parameters.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np

from nomad_lab.store.records import RunRecord, text_sha256
from nomad_lab.store.tables import StoreError, TableGroup

if TYPE_CHECKING:
    import numpy as np

    from nomad_lab.data.pool_format import PoolColumns

__all__ = ["PoolImport", "pool_fingerprint"]

NULLABLE_COLUMNS = ("suite", "refusal_kind", "doc_id", "chunk_id")
LIST_COLUMNS = ("tags", "relevant_doc_ids")


def pool_fingerprint(chunk_ids: list[str | None], doc_ids: list[str | None], texts: list[str] | None) -> str:
    """16 hex characters over the file's distinct (chunk id, text) pairs (doc ids when it has no chunk)."""
    digest = hashlib.sha256(b"nomad-lab pools\x00")
    keys = sorted(
        {
            (c or "", d or "", "" if texts is None else texts[i])
            for i, (c, d) in enumerate(zip(chunk_ids, doc_ids, strict=True))
        }
    )
    for chunk, doc, text in keys:
        digest.update(f"{chunk}\x00{doc}\x00{text_sha256(text)}\x01".encode("utf-8", errors="surrogatepass"))
    return digest.hexdigest()[:16]


class PoolImport(TableGroup):
    """Methods of :class:`nomad_lab.store.Store` that store a checked pool file and read its named scores."""

    def _insert(self, table: str, columns: dict[str, Any]) -> None:
        """One INSERT over a dict of equal-length numpy arrays (DuckDB scans them without a copy per row).

        DuckDB infers an object column's type from a sample of its rows, so a nullable string column
        (whose sample may hold only nulls) travels with ``NUL`` for null and a string list as JSON text."""
        view = f"_import_{table}"
        self.con.register(view, columns)  # replaces a view a failed import left behind
        picks = [
            f"from_json({name}, '[\"VARCHAR\"]')"
            if name in LIST_COLUMNS
            else f"nullif({name}, chr(0))"
            if name in NULLABLE_COLUMNS
            else name
            for name in columns
        ]
        self.con.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(picks)} FROM {view}")
        self.con.unregister(view)

    def import_pools(self, pools: PoolColumns, run: RunRecord | None = None) -> str:
        """Store a validated pool file as a run of kind ``retrieval``; returns the new run id."""
        chunk_ids = pools.chunk_ids()
        fingerprint = pool_fingerprint(chunk_ids, pools.doc_id, pools.text)
        header = pools.header
        params = {
            **header["params"],
            "poolFormat": header["format"],
            "poolColumns": pools.columns,
            "poolScores": sorted(pools.scores),
            **({"embedder": dict(header["embedder"])} if "embedder" in header else {}),
            **({"corpusFingerprint": header["fingerprint"]} if "fingerprint" in header else {}),
            **({"stack": dict(header["stack"])} if "stack" in header else {}),
        }
        run = run or RunRecord(
            kind="retrieval", fingerprint=fingerprint, params=params, source=f"import:{pools.source}"
        )
        counts = np.diff(pools.offsets)
        golden = np.repeat(np.asarray(pools.ids, dtype=object), counts)
        n = pools.size
        with self.transaction():
            self.con.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL, '{}', ?)",
                [run.run_id, run.kind, run.created_at, fingerprint, None, _json(params), run.source],
            )
            self._insert(
                "cases",
                {
                    "run_id": np.full(n, run.run_id, dtype=object),
                    "golden_id": np.asarray(pools.ids, dtype=object),
                    "position": np.arange(n, dtype=np.int32),
                    "suite": _strings(pools.suites),
                    "query": np.asarray(pools.queries, dtype=object),
                    "tags": _lists(pools.tags),
                    "expect_refusal": np.array([k is not None for k in pools.kinds], dtype=bool),
                    "relevant_doc_ids": _lists(pools.relevant),
                    "refusal_kind": _strings(pools.kinds),
                },
            )
            # no raw cosines: the final score stands in (NOT NULL column); the run's poolColumns say so
            semantic = pools.semantic if pools.semantic is not None else pools.score
            self._insert(
                "pools",
                {
                    "run_id": np.full(pools.candidates, run.run_id, dtype=object),
                    "golden_id": golden,
                    "rank": pools.rank.astype(np.int32),
                    "doc_id": _strings(pools.doc_id),
                    "chunk_id": _strings(chunk_ids),
                    "score": pools.score,
                    "semantic_score": semantic,
                },
            )
            for name, values in pools.scores.items():
                self._insert(
                    "pool_scores",
                    {
                        "run_id": np.full(pools.candidates, run.run_id, dtype=object),
                        "golden_id": golden,
                        "rank": pools.rank.astype(np.int32),
                        "name": np.full(pools.candidates, name, dtype=object),
                        "value": values,
                    },
                )
            if pools.text is not None:
                self._insert_chunks(fingerprint, chunk_ids, pools.doc_id, pools.text)
        return run.run_id

    def _insert_chunks(
        self, fingerprint: str, chunk_ids: list[Any], doc_ids: list[Any], texts: list[str]
    ) -> None:
        """The file's passages as chunks of its derived fingerprint (already there: the same file's)."""
        first = {chunk: i for i, chunk in reversed(list(enumerate(chunk_ids)))}
        order = sorted(first.values())
        have = {
            r[0]
            for r in self.con.execute(
                "SELECT chunk_id FROM chunks WHERE fingerprint = ?", [fingerprint]
            ).fetchall()
        }
        order = [i for i in order if chunk_ids[i] not in have]
        if not order:
            return
        chosen = [texts[i] for i in order]
        self._insert(
            "chunks",
            {
                "fingerprint": np.full(len(order), fingerprint, dtype=object),
                "chunk_id": np.asarray([chunk_ids[i] for i in order], dtype=object),
                "doc_id": np.asarray([doc_ids[i] or "" for i in order], dtype=object),
                "source": np.asarray([doc_ids[i] or "" for i in order], dtype=object),
                "chunk_index": np.zeros(len(order), dtype=np.int32),
                "total_chunks": np.ones(len(order), dtype=np.int32),
                "text": np.asarray(chosen, dtype=object),
                "keywords": np.full(len(order), "", dtype=object),
                "char_count": np.asarray([len(t) for t in chosen], dtype=np.int32),
                "text_sha256": np.asarray([text_sha256(t) for t in chosen], dtype=object),
            },
        )

    def get_pool_scores(self, run_id: str, name: str) -> dict[str, dict[int, float]]:
        """A named score column of an imported run: golden id -> rank -> value (one error line if absent)."""
        rows = self.con.execute(
            "SELECT golden_id, rank, value FROM pool_scores WHERE run_id = ? AND name = ?", [run_id, name]
        ).fetchall()
        if not rows:
            known = [
                r[0]
                for r in self.con.execute(
                    "SELECT DISTINCT name FROM pool_scores WHERE run_id = ? ORDER BY name", [run_id]
                ).fetchall()
            ]
            raise StoreError(
                f"{self.path}: run {run_id} has no score column {name!r} "
                f"(its columns: {', '.join(known) or 'none: import a pool file with named scores'})"
            )
        scores: dict[str, dict[int, float]] = {}
        for golden_id, rank, value in rows:
            scores.setdefault(golden_id, {})[rank] = value
        return scores


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


def _lists(values: list[list[str]]) -> np.ndarray:
    """String lists as JSON text (``_insert`` reads them back with ``from_json``)."""
    import json

    return np.asarray([json.dumps(list(v)) for v in values], dtype=object)


def _strings(values: list[str | None]) -> np.ndarray:
    """A nullable string column with ``NUL`` for null (``_insert`` turns it back)."""
    return np.asarray(["\x00" if v is None else v for v in values], dtype=object)
