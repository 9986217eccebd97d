"""The workspace store: one DuckDB file with the index, every run, candidate pool and judge verdict.

Why one file: gate studies (floor sweeps, judge models) are SQL or numpy passes over stored pools, so
retrieval runs once per corpus and a model verdict is computed once per (model, exact judge input), ever.
The file carries a schema version: an older store is upgraded in place by the numbered migrations of
``schema.MIGRATIONS`` on its first writable open; a file of a newer or unknown version is refused with a
clear error before anything is written to it. Every multi-row write happens in one transaction, so an
interrupted run leaves either all of its rows or none. DuckDB lets one process at a time open the file
for writing; a second process waits up to ``NOMAD_LAB_STORE_WAIT`` seconds (default 10) for the lock
and then gets :class:`StoreLockedError` naming the file and the process holding it, never a torn file.

Tables (see ``schema.MIGRATIONS``): ``indexes`` + ``chunks`` keyed by corpus fingerprint; ``embeddings``
keyed by (embedder key, SHA-256 of the chunk text), so re-chunking one document or building the no-
distractor index re-embeds only new text; ``runs``, ``cases`` (per-question results), ``pools`` (the
FULL pre-floor candidate pool of every question), ``run_metrics``; ``judge_verdicts``; and, since
version 2, ``generation_answers`` (eval generation's answer cache), ``study_rows`` (the measured rows of
the estimator and placement studies, one run id per study run) and ``notebook_cells`` (one row per
executed notebook grid cell); since version 3, ``model_calls``, the log of every chat call (see
``calls.CallLog``, whose methods ``Store`` has).

The reference's candidate dump (SPEC §2.5) is the interchange format: :meth:`Store.export_dump` and
:meth:`Store.import_dump`, with :func:`validate_dump` naming the offending field on bad input.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.jsfmt import js_json_dumps
from nomad_lab.data.dump import DUMP_PARAM_KEYS, validate_dump
from nomad_lab.store.calls import CallLog
from nomad_lab.store.records import (
    CaseRecord,
    ChunkRecord,
    IndexRecord,
    PoolEntry,
    RunRecord,
    Verdict,
    new_run_id,
)
from nomad_lab.store.schema import EMBEDDING_DIMENSION, MIGRATIONS, SCHEMA_VERSION

__all__ = ["Store", "StoreError", "StoreLockedError", "StoreSchemaError", "record_study_rows"]

LOCK_WAIT_ENV = "NOMAD_LAB_STORE_WAIT"
DEFAULT_LOCK_WAIT_S = 10.0
_LOCK_HELD = re.compile(r"Conflicting lock is held in .*\(PID (\d+)\)")


class StoreError(NomadLabError, RuntimeError):
    """The store file cannot be used (not a DuckDB file, locked, or not a nomad-lab store)."""


class StoreSchemaError(StoreError):
    """The store was written with another schema version; it is left untouched."""


class StoreLockedError(StoreError):
    """Another process holds the store's write lock and kept it longer than the wait."""


class _Locked(Exception):
    """DuckDB refused the file lock (internal: retried until the wait runs out)."""

    def __init__(self, pid: str | None) -> None:
        super().__init__(pid)
        self.pid = pid


def _lock_wait_from_env() -> float:
    raw = os.environ.get(LOCK_WAIT_ENV, "")
    try:
        value = float(raw) if raw else DEFAULT_LOCK_WAIT_S
    except ValueError:
        raise StoreError(f"{LOCK_WAIT_ENV}={raw!r}: expected a number of seconds") from None
    return value if math.isfinite(value) and value >= 0 else DEFAULT_LOCK_WAIT_S


def _raise_if_locked(exc: Exception) -> None:
    match = _LOCK_HELD.search(str(exc))
    if match or "Could not set lock" in str(exc):
        raise _Locked(match.group(1) if match else None) from exc


class Store(CallLog):
    """One DuckDB file per workspace. Use as a context manager, or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike[str], read_only: bool = False, lock_wait: float | None = None):
        """Open (or create) the store; ``lock_wait`` seconds (default: ``NOMAD_LAB_STORE_WAIT`` or 10)
        is how long to wait for another process to release the file before :class:`StoreLockedError`."""
        import duckdb

        self.path = Path(path)
        self.read_only = read_only
        wait = _lock_wait_from_env() if lock_wait is None else lock_wait
        deadline, delay = time.monotonic() + wait, 0.05
        while True:
            try:
                exists = self._connect(duckdb)
                break
            except _Locked as locked:
                if time.monotonic() + delay > deadline:
                    holder = f"PID {locked.pid}" if locked.pid else "another process"
                    raise StoreLockedError(
                        f"{self.path}: another nomad-lab process ({holder}) holds this store and did not "
                        f"release it within {wait:g} s; wait for it to finish or use another --store "
                        f"(set {LOCK_WAIT_ENV} to wait longer)"
                    ) from locked.__cause__
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        if not exists:
            with self.transaction():
                for migration in MIGRATIONS:
                    self.con.execute(migration)
                self.con.execute(
                    "INSERT INTO nomad_lab_meta VALUES ('schema_version', ?), ('created_by', 'nomad-lab')",
                    [str(SCHEMA_VERSION)],
                )
            self.found_version = SCHEMA_VERSION
        elif not self.read_only and self.found_version < SCHEMA_VERSION:
            self.upgrade()

    def upgrade(self) -> None:
        """Apply the migrations this store lacks, all or none, and record the new version."""
        with self.transaction():
            for migration in MIGRATIONS[self.found_version :]:
                self.con.execute(migration)
            self.con.execute(
                "UPDATE nomad_lab_meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION)]
            )
        self.found_version = SCHEMA_VERSION

    def _connect(self, duckdb: Any) -> bool:
        """One attempt at opening the file; whether it existed. Raises ``_Locked`` on a held lock."""
        exists = self.path.exists() and self.path.stat().st_size > 0
        if exists:
            self._check_existing(duckdb)
        elif self.read_only:
            raise StoreError(f"{self.path}: store not found")
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.con = duckdb.connect(str(self.path), read_only=self.read_only)
        except duckdb.Error as exc:
            _raise_if_locked(exc)
            raise StoreError(f"{self.path}: cannot open the store: {exc}") from exc
        return exists

    def _check_existing(self, duckdb: Any) -> None:
        """Read the schema version through a read-only connection, so a refused file is never written."""
        try:
            probe = duckdb.connect(str(self.path), read_only=True)
        except duckdb.Error as exc:
            _raise_if_locked(exc)
            raise StoreError(f"{self.path}: cannot open the store: {exc}") from exc
        try:
            tables = {
                row[0] for row in probe.execute("SELECT table_name FROM information_schema.tables").fetchall()
            }
            if "nomad_lab_meta" not in tables:
                raise StoreError(
                    f"{self.path}: a DuckDB file but not a nomad-lab store (no nomad_lab_meta table)"
                )
            row = probe.execute("SELECT value FROM nomad_lab_meta WHERE key = 'schema_version'").fetchone()
        finally:
            probe.close()
        found = row[0] if row else None
        if found is None or not found.isdigit() or not 1 <= int(found) <= SCHEMA_VERSION:
            raise StoreSchemaError(
                f"{self.path}: store schema version {found} is not the version this nomad-lab uses "
                f"({SCHEMA_VERSION}); the file was left untouched. Use another --store path, or delete the "
                "file to rebuild it (its runs and cached verdicts are lost)."
            )
        self.found_version = int(found)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing writes."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    @property
    def schema_version(self) -> int:
        return int(
            self.con.execute("SELECT value FROM nomad_lab_meta WHERE key = 'schema_version'").fetchone()[0]
        )

    # ---------------------------------------------------------------- index

    def get_index(self, fingerprint: str) -> IndexRecord | None:
        row = self.con.execute(
            "SELECT fingerprint, corpus_dir, doc_count, chunk_count, model_key, params, build_seconds, "
            "created_at FROM indexes WHERE fingerprint = ?",
            [fingerprint],
        ).fetchone()
        if row is None:
            return None
        return IndexRecord(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]), row[6], row[7])

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
            if chunks:
                self.con.executemany(
                    "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        [
                            index.fingerprint,
                            c.chunk_id,
                            c.doc_id,
                            c.source,
                            c.chunk_index,
                            c.total_chunks,
                            c.text,
                            c.keywords,
                            c.char_count,
                            c.text_sha256,
                        ]
                        for c in chunks
                    ],
                )

    def cached_embedding_keys(self, model_key: str, text_sha256s: Iterable[str]) -> set[str]:
        """Which of these text hashes already have a vector for this embedder."""
        wanted = list(dict.fromkeys(text_sha256s))
        if not wanted:
            return set()
        rows = self.con.execute(
            "SELECT text_sha256 FROM embeddings WHERE model_key = ? AND list_contains(?, text_sha256)",
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
            self.con.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                [
                    [model_key, sha, vector.astype(np.float32).tolist()]
                    for sha, vector in zip(text_sha256s, vectors, strict=True)
                ],
            )

    def get_embeddings(self, model_key: str, text_sha256s: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of these text hashes for this embedder (absent hashes are left out)."""
        wanted = list(dict.fromkeys(text_sha256s))
        if not wanted:
            return {}
        result = self.con.execute(
            "SELECT text_sha256, vector FROM embeddings "
            "WHERE model_key = ? AND list_contains(?, text_sha256)",
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

    # ---------------------------------------------------------------- runs, cases, pools, metrics

    def put_run(
        self,
        run: RunRecord,
        cases: Sequence[CaseRecord],
        pools: Mapping[str, Sequence[PoolEntry]],
        metrics: Sequence[tuple[str, str, float | None, float | None, float | None, str | None]] = (),
    ) -> str:
        """A run, its cases, pools (by golden id) and ``(scope, name, value, low, high, method)`` rows."""
        with self.transaction():
            self.con.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    run.run_id,
                    run.kind,
                    run.created_at,
                    run.fingerprint,
                    run.suite,
                    json.dumps(run.params),
                    run.git_sha,
                    run.git_branch,
                    run.git_dirty,
                    json.dumps(run.versions),
                    run.source,
                ],
            )
            if cases:
                self.con.executemany(
                    "INSERT INTO cases VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        [
                            run.run_id,
                            c.golden_id,
                            c.position,
                            c.suite,
                            c.query,
                            list(c.tags),
                            c.expect_refusal,
                            list(c.relevant_doc_ids),
                            None if c.result is None else json.dumps(c.result),
                            None if c.judge is None else json.dumps(c.judge),
                        ]
                        for c in cases
                    ],
                )
            rows = [
                [run.run_id, golden_id, p.rank, p.doc_id, p.chunk_id, p.score, p.semantic_score]
                for golden_id, entries in pools.items()
                for p in entries
            ]
            if rows:
                self.con.executemany("INSERT INTO pools VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            if metrics:
                self.con.executemany(
                    "INSERT INTO run_metrics VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [[run.run_id, *m] for m in metrics],
                )
        return run.run_id

    def get_run(self, run_id: str) -> RunRecord:
        row = self.con.execute(
            "SELECT kind, fingerprint, params, suite, git_sha, git_branch, git_dirty, versions, source, "
            "run_id, created_at FROM runs WHERE run_id = ?",
            [run_id],
        ).fetchone()
        if row is None:
            raise StoreError(f"{self.path}: no run {run_id!r}")
        return RunRecord(
            row[0],
            row[1],
            json.loads(row[2]),
            row[3],
            row[4],
            row[5],
            row[6],
            json.loads(row[7]),
            row[8],
            row[9],
            row[10],
        )

    def get_cases(self, run_id: str) -> list[CaseRecord]:
        rows = self.con.execute(
            "SELECT golden_id, position, tags, expect_refusal, relevant_doc_ids, suite, query, result, judge "
            "FROM cases WHERE run_id = ? ORDER BY position",
            [run_id],
        ).fetchall()
        return [
            CaseRecord(
                r[0],
                r[1],
                tuple(r[2]),
                r[3],
                tuple(r[4]),
                r[5],
                r[6],
                None if r[7] is None else json.loads(r[7]),
                None if r[8] is None else json.loads(r[8]),
            )
            for r in rows
        ]

    def get_pools(self, run_id: str) -> dict[str, list[PoolEntry]]:
        pools: dict[str, list[PoolEntry]] = {}
        for golden_id, rank, doc_id, chunk_id, score, semantic in self.con.execute(
            "SELECT golden_id, rank, doc_id, chunk_id, score, semantic_score FROM pools WHERE run_id = ? "
            "ORDER BY golden_id, rank",
            [run_id],
        ).fetchall():
            pools.setdefault(golden_id, []).append(PoolEntry(rank, doc_id, chunk_id, score, semantic))
        return pools

    def latest_run_id(self, kind: str | None = None) -> str | None:
        row = self.con.execute(
            "SELECT run_id FROM runs WHERE ? IS NULL OR kind = ? ORDER BY created_at DESC LIMIT 1",
            [kind, kind],
        ).fetchone()
        return None if row is None else row[0]

    def run_fingerprints_since(self, since: datetime) -> list[str]:
        """Distinct corpus fingerprints of the runs stored at or after ``since``, first stored first: which
        corpora a step of the main job read (its manifest entry records them)."""
        rows = self.con.execute(
            "SELECT fingerprint FROM runs WHERE created_at >= ? "
            "GROUP BY fingerprint ORDER BY min(created_at)",
            [since],
        ).fetchall()
        return [row[0] for row in rows]

    def run_ids(self, kind: str | None = None) -> list[str]:
        """Every run id of this kind (None: all), oldest first."""
        rows = self.con.execute(
            "SELECT run_id FROM runs WHERE ? IS NULL OR kind = ? ORDER BY created_at", [kind, kind]
        ).fetchall()
        return [row[0] for row in rows]

    # ---------------------------------------------------------------- judge verdicts

    def get_verdict(self, model: str, input_sha256: str) -> Verdict | None:
        # A read-only open of a store older than migration 3 has no confidence columns: read them as null.
        confidence = "p_true, confidence_reason" if self.schema_version >= 3 else "NULL, NULL"
        row = self.con.execute(
            f"SELECT on_topic, ok, reason, ms, prompt_tokens, {confidence} FROM judge_verdicts "
            "WHERE model = ? AND input_sha256 = ?",
            [model, input_sha256],
        ).fetchone()
        return None if row is None else Verdict(*row)

    def put_verdict(self, model: str, input_sha256: str, verdict: Verdict) -> None:
        with self.transaction():
            self.con.execute(
                "INSERT OR REPLACE INTO judge_verdicts (model, input_sha256, on_topic, ok, reason, ms, "
                "prompt_tokens, created_at, p_true, confidence_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    model,
                    input_sha256,
                    verdict.on_topic,
                    verdict.ok,
                    verdict.reason,
                    verdict.ms,
                    verdict.prompt_tokens,
                    datetime.now(UTC),
                    verdict.p_true,
                    verdict.confidence_reason,
                ],
            )

    # ---------------------------------------------------------------- study rows

    def put_study_rows(self, study: str, params: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> str:
        """One study run's rows, all or none; returns its run id."""
        run_id = new_run_id()
        now = datetime.now(UTC)
        with self.transaction():
            self.con.executemany(
                "INSERT INTO study_rows VALUES (?, ?, ?, ?, ?, ?)",
                [(run_id, study, now, json.dumps(params), i, json.dumps(row)) for i, row in enumerate(rows)],
            )
        return run_id

    def study_rows(self, study: str, run_id: str | None = None) -> list[dict[str, Any]]:
        """The rows of ``run_id``, or of the study's latest run, in their original order."""
        if run_id is None:
            found = self.con.execute(
                "SELECT run_id FROM study_rows WHERE study = ? ORDER BY created_at DESC LIMIT 1", [study]
            ).fetchone()
            if found is None:
                return []
            run_id = found[0]
        rows = self.con.execute(
            "SELECT row_data FROM study_rows WHERE run_id = ? ORDER BY position", [run_id]
        ).fetchall()
        return [json.loads(row[0]) for row in rows]

    # ---------------------------------------------------------------- notebook grid cells

    def put_notebook_cell(
        self,
        cell_key: str,
        notebook: str,
        parameters: Mapping[str, Any],
        output_dir: str,
        seconds: float,
        git_sha: str | None,
    ) -> None:
        with self.transaction():
            self.con.execute(
                "INSERT OR REPLACE INTO notebook_cells VALUES (?, ?, ?, ?, ?, ?, ?)",
                [cell_key, notebook, json.dumps(parameters), output_dir, seconds, git_sha, datetime.now(UTC)],
            )

    def has_notebook_cell(self, cell_key: str) -> bool:
        return (
            self.con.execute("SELECT 1 FROM notebook_cells WHERE cell_key = ?", [cell_key]).fetchone()
            is not None
        )

    # ---------------------------------------------------------------- the reference dump format

    def export_dump(self, run_id: str) -> dict[str, Any]:
        """The run's pools in the reference dump shape (SPEC §2.5), pools in question order."""
        run = self.get_run(run_id)
        missing = [key for key in DUMP_PARAM_KEYS if key not in run.params]
        if missing:
            raise StoreError(f"{self.path}: run {run_id} has no {', '.join(missing)} parameter(s) to dump")
        pools = self.get_pools(run_id)
        return {
            "fingerprint": run.fingerprint,
            "params": {key: run.params[key] for key in DUMP_PARAM_KEYS},
            "pools": [
                {
                    "id": case.golden_id,
                    "tags": list(case.tags),
                    "expectRefusal": case.expect_refusal,
                    "relevantDocIds": list(case.relevant_doc_ids),
                    "candidates": [
                        {"docId": p.doc_id, "score": p.score, "semanticScore": p.semantic_score}
                        for p in pools.get(case.golden_id, [])
                    ],
                }
                for case in self.get_cases(run_id)
            ],
        }

    def write_dump(self, run_id: str, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`export_dump` as ``JSON.stringify(dump, null, 2)`` would."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(js_json_dumps(self.export_dump(run_id)), encoding="utf-8")
        return target

    def import_dump(self, dump: Mapping[str, Any], source: str = "<dump>") -> str:
        """Store a (validated) reference dump as a run of kind ``retrieval``; returns the new run id."""
        validate_dump(dump, source)
        run = RunRecord(
            kind="retrieval",
            fingerprint=dump["fingerprint"],
            params=dict(dump["params"]),
            source=f"import:{source}",
        )
        cases = [
            CaseRecord(p["id"], i, tuple(p["tags"]), p["expectRefusal"], tuple(p["relevantDocIds"]))
            for i, p in enumerate(dump["pools"])
        ]
        pools = {
            p["id"]: [
                PoolEntry(rank, c["docId"], None, float(c["score"]), float(c["semanticScore"]))
                for rank, c in enumerate(p["candidates"], start=1)
            ]
            for p in dump["pools"]
        }
        return self.put_run(run, cases, pools)


def record_study_rows(
    study: str,
    params: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    store_path: str | os.PathLike[str] | None = None,
) -> str:
    """Store one study run's rows in the workspace store (default path unless given); its run id."""
    from nomad_lab.core.workspace import DEFAULT_STORE_PATH

    with Store(store_path or DEFAULT_STORE_PATH) as store:
        return store.put_study_rows(study, params, rows)
