"""The workspace store: one DuckDB file with the index, every run, candidate pool and judge verdict.

Why one file: gate studies (floor sweeps, judge models) are SQL or numpy passes over stored pools, so
retrieval runs once per corpus and a model verdict is computed once per (model, exact judge input), ever.
The file carries a schema version; a file written by an incompatible version is refused with a clear
error before anything is written to it. Every multi-row write happens in one transaction, so an
interrupted run leaves either all of its rows or none. DuckDB lets one process at a time open the file
for writing; a second process waits up to ``NOMAD_LAB_STORE_WAIT`` seconds (default 10) for the lock
and then gets :class:`StoreLockedError` naming the file and the process holding it, never a torn file.

Tables (see ``_SCHEMA``): ``indexes`` + ``chunks`` keyed by corpus fingerprint; ``embeddings`` keyed by
(embedder key, SHA-256 of the chunk text), so re-chunking one document or building the no-distractor
index re-embeds only new text; ``runs``, ``cases`` (per-question results), ``pools`` (the FULL pre-floor
candidate pool of every question), ``run_metrics``; ``judge_verdicts``; and the additive
``generation_answers`` (eval generation's answer cache), ``study_rows`` (the measured rows of the
estimator and placement studies, one run id per study run) and ``notebook_cells`` (one row per executed
notebook grid cell).

The reference's candidate dump (SPEC §2.5) is the interchange format: :meth:`Store.export_dump` and
:meth:`Store.import_dump`, with :func:`validate_dump` naming the offending field on bad input.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.corpus import is_fingerprint
from nomad_lab.errors import NomadLabError
from nomad_lab.goldens import check_doc_id
from nomad_lab.jsfmt import js_json_dumps

__all__ = [
    "SCHEMA_VERSION",
    "CaseRecord",
    "ChunkRecord",
    "DumpError",
    "IndexRecord",
    "PoolEntry",
    "RunRecord",
    "Store",
    "StoreError",
    "StoreLockedError",
    "StoreSchemaError",
    "Verdict",
    "judge_input_sha256",
    "load_dump",
    "record_study_rows",
    "validate_dump",
]

SCHEMA_VERSION = 1
EMBEDDING_DIMENSION = 384  # FLOAT[384]: all-MiniLM-L6-v2; another model needs a new schema version
DUMP_PARAM_KEYS = ("topK", "scoreThreshold", "minFinalScore", "kValues")
LOCK_WAIT_ENV = "NOMAD_LAB_STORE_WAIT"
DEFAULT_LOCK_WAIT_S = 10.0
_LOCK_HELD = re.compile(r"Conflicting lock is held in .*\(PID (\d+)\)")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS nomad_lab_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS indexes (
    fingerprint VARCHAR PRIMARY KEY, created_at TIMESTAMPTZ NOT NULL, corpus_dir VARCHAR NOT NULL,
    doc_count INTEGER NOT NULL, chunk_count INTEGER NOT NULL, model_key VARCHAR NOT NULL,
    params JSON NOT NULL, build_seconds DOUBLE);
CREATE TABLE IF NOT EXISTS chunks (
    fingerprint VARCHAR NOT NULL, chunk_id VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, source VARCHAR NOT NULL,
    chunk_index INTEGER NOT NULL, total_chunks INTEGER NOT NULL, text VARCHAR NOT NULL,
    keywords VARCHAR NOT NULL, char_count INTEGER NOT NULL, text_sha256 VARCHAR NOT NULL,
    PRIMARY KEY (fingerprint, chunk_id));
CREATE TABLE IF NOT EXISTS embeddings (
    model_key VARCHAR NOT NULL, text_sha256 VARCHAR NOT NULL, vector FLOAT[{EMBEDDING_DIMENSION}] NOT NULL,
    PRIMARY KEY (model_key, text_sha256));
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL,
    fingerprint VARCHAR NOT NULL, suite VARCHAR, params JSON NOT NULL, git_sha VARCHAR, git_branch VARCHAR,
    git_dirty BOOLEAN, versions JSON NOT NULL, source VARCHAR);
CREATE TABLE IF NOT EXISTS cases (
    run_id VARCHAR NOT NULL, golden_id VARCHAR NOT NULL, position INTEGER NOT NULL, suite VARCHAR,
    query VARCHAR, tags VARCHAR[] NOT NULL, expect_refusal BOOLEAN NOT NULL,
    relevant_doc_ids VARCHAR[] NOT NULL, result JSON, judge JSON,
    PRIMARY KEY (run_id, golden_id));
CREATE TABLE IF NOT EXISTS pools (
    run_id VARCHAR NOT NULL, golden_id VARCHAR NOT NULL, rank INTEGER NOT NULL, doc_id VARCHAR,
    chunk_id VARCHAR, score DOUBLE NOT NULL, semantic_score DOUBLE NOT NULL,
    PRIMARY KEY (run_id, golden_id, rank));
CREATE TABLE IF NOT EXISTS run_metrics (
    run_id VARCHAR NOT NULL, scope VARCHAR NOT NULL, name VARCHAR NOT NULL, value DOUBLE,
    ci_low DOUBLE, ci_high DOUBLE, ci_method VARCHAR, PRIMARY KEY (run_id, scope, name));
CREATE TABLE IF NOT EXISTS judge_verdicts (
    model VARCHAR NOT NULL, input_sha256 VARCHAR NOT NULL, on_topic BOOLEAN, ok BOOLEAN NOT NULL,
    reason VARCHAR, ms DOUBLE, prompt_tokens INTEGER, created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (model, input_sha256));
"""

# Tables added after schema version 1 shipped. They only add, never change, so an existing version-1 store
# gains them on its next writable open and nothing else in it changes: no version bump is needed.
_ADDITIVE_SCHEMA = """
CREATE TABLE IF NOT EXISTS generation_answers (
    params_key VARCHAR NOT NULL, golden_id VARCHAR NOT NULL, golden_sha256 VARCHAR NOT NULL,
    repeat INTEGER NOT NULL, params JSON NOT NULL, observation JSON NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (params_key, golden_id, golden_sha256, repeat));
CREATE TABLE IF NOT EXISTS study_rows (
    run_id VARCHAR NOT NULL, study VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL, params JSON NOT NULL,
    position INTEGER NOT NULL, row_data JSON NOT NULL, PRIMARY KEY (run_id, position));
CREATE TABLE IF NOT EXISTS notebook_cells (
    cell_key VARCHAR PRIMARY KEY, notebook VARCHAR NOT NULL, parameters JSON NOT NULL,
    output_dir VARCHAR NOT NULL, seconds DOUBLE NOT NULL, git_sha VARCHAR, created_at TIMESTAMPTZ NOT NULL);
"""


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


class DumpError(NomadLabError, ValueError):
    """A candidate dump is malformed; the message names the file and the field."""


@dataclass(frozen=True)
class ChunkRecord:
    """One indexed chunk: the payload the reranker reads (``text``, ``keywords``) plus identity."""

    chunk_id: str
    doc_id: str
    source: str
    chunk_index: int
    total_chunks: int
    text: str
    keywords: str
    char_count: int
    text_sha256: str


@dataclass(frozen=True)
class IndexRecord:
    fingerprint: str
    corpus_dir: str
    doc_count: int
    chunk_count: int
    model_key: str
    params: dict[str, Any]
    build_seconds: float | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class RunRecord:
    """A run: ``params`` holds at least the dump keys (topK, scoreThreshold, minFinalScore, kValues)."""

    kind: str
    fingerprint: str
    params: dict[str, Any]
    suite: str | None = None
    git_sha: str | None = None
    git_branch: str | None = None
    git_dirty: bool | None = None
    versions: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    run_id: str = field(default_factory=lambda: _new_run_id())
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @classmethod
    def with_git(cls, git: Mapping[str, Any], **fields: Any) -> RunRecord:
        """A run carrying ``provenance.git_state()``'s ``{gitSha, gitBranch, gitDirty}``."""
        return cls(git_sha=git["gitSha"], git_branch=git["gitBranch"], git_dirty=git["gitDirty"], **fields)


@dataclass(frozen=True)
class PoolEntry:
    """One candidate of a pool, rank 1 = best after rerank (pre-floor)."""

    rank: int
    doc_id: str | None
    chunk_id: str | None
    score: float
    semantic_score: float


@dataclass(frozen=True)
class CaseRecord:
    golden_id: str
    position: int
    tags: tuple[str, ...]
    expect_refusal: bool
    relevant_doc_ids: tuple[str, ...]
    suite: str | None = None
    query: str | None = None
    result: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None


@dataclass(frozen=True)
class Verdict:
    """Judge outcome; ``on_topic`` is None when the judge failed open (``ok`` false, see ``reason``)."""

    on_topic: bool | None
    ok: bool
    reason: str | None = None
    ms: float | None = None
    prompt_tokens: int | None = None

    @classmethod
    def of(cls, result: Any) -> Verdict:
        """The stored form of a ``judge_service.JudgeResult``."""
        return cls(result.verdict, result.judged, result.reason, result.ms, result.prompt_tokens)


def _new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


def judge_input_sha256(judge_input: str) -> str:
    """The verdict cache key's second half: SHA-256 of the exact judge user turn."""
    return hashlib.sha256(judge_input.encode("utf-8", errors="surrogatepass")).hexdigest()


class Store:
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
                self.con.execute(_SCHEMA)
                self.con.execute(
                    "INSERT INTO nomad_lab_meta VALUES ('schema_version', ?), ('created_by', 'nomad-lab')",
                    [str(SCHEMA_VERSION)],
                )
        if not self.read_only:
            self.con.execute(_ADDITIVE_SCHEMA)

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
        if found != str(SCHEMA_VERSION):
            raise StoreSchemaError(
                f"{self.path}: store schema version {found} is not the version this nomad-lab uses "
                f"({SCHEMA_VERSION}); the file was left untouched. Use another --store path, or delete the "
                "file to rebuild it (its runs and cached verdicts are lost)."
            )

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

    def put_embeddings(self, model_key: str, text_sha256s: Sequence[str], vectors: np.ndarray) -> None:
        if len(text_sha256s) != len(vectors):
            raise ValueError("one vector per text hash")
        if len(vectors) and vectors.shape[1] != EMBEDDING_DIMENSION:
            raise StoreError(
                f"{self.path}: vectors have dimension {vectors.shape[1]}, "
                f"the store holds {EMBEDDING_DIMENSION}"
            )
        with self.transaction():
            self.con.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                [
                    [model_key, sha, vector.astype(np.float32).tolist()]
                    for sha, vector in zip(text_sha256s, vectors, strict=True)
                ],
            )

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
            else np.zeros((0, EMBEDDING_DIMENSION), dtype=np.float32)
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

    # ---------------------------------------------------------------- judge verdicts

    def get_verdict(self, model: str, input_sha256: str) -> Verdict | None:
        row = self.con.execute(
            "SELECT on_topic, ok, reason, ms, prompt_tokens FROM judge_verdicts "
            "WHERE model = ? AND input_sha256 = ?",
            [model, input_sha256],
        ).fetchone()
        return None if row is None else Verdict(*row)

    def put_verdict(self, model: str, input_sha256: str, verdict: Verdict) -> None:
        with self.transaction():
            self.con.execute(
                "INSERT OR REPLACE INTO judge_verdicts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    model,
                    input_sha256,
                    verdict.on_topic,
                    verdict.ok,
                    verdict.reason,
                    verdict.ms,
                    verdict.prompt_tokens,
                    datetime.now(UTC),
                ],
            )

    # ---------------------------------------------------------------- study rows

    def put_study_rows(self, study: str, params: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> str:
        """One study run's rows, all or none; returns its run id."""
        run_id = _new_run_id()
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
    from nomad_lab.workspace import DEFAULT_STORE_PATH

    with Store(store_path or DEFAULT_STORE_PATH) as store:
        return store.put_study_rows(study, params, rows)


def _is_number(value: Any) -> bool:
    """A JSON number; Python's json also reads NaN and Infinity, which no reference dump holds."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def validate_dump(dump: Any, source: str = "<dump>") -> None:
    """Raise :class:`DumpError` naming ``<source>: <field path>`` for the first problem found."""

    def fail(where: str, why: str) -> None:
        raise DumpError(f"{source}: {where}: {why}")

    if not isinstance(dump, Mapping):
        fail("top level", f"a candidate dump is a JSON object, got {type(dump).__name__}")
    for key in ("fingerprint", "params", "pools"):
        if key not in dump:
            fail(key, "missing (is this a candidate dump written by eval retrieval --dump?)")
    if not is_fingerprint(dump["fingerprint"]):
        fail("fingerprint", f"expected 16 lowercase hex characters, got {dump['fingerprint']!r}")
    params = dump["params"]
    if not isinstance(params, Mapping):
        fail("params", "expected an object")
    for key in DUMP_PARAM_KEYS:
        if key not in params:
            fail(f"params.{key}", "missing")
    for key in ("topK", "scoreThreshold", "minFinalScore"):
        if not _is_number(params[key]):
            fail(f"params.{key}", f"expected a number, got {params[key]!r}")
    if not isinstance(params["kValues"], list) or not all(_is_number(k) for k in params["kValues"]):
        fail("params.kValues", "expected an array of numbers")
    pools = dump["pools"]
    if not isinstance(pools, list):
        fail("pools", "expected an array")
    seen: set[str] = set()
    for i, pool in enumerate(pools):
        where = f"pools[{i}]"
        if not isinstance(pool, Mapping):
            fail(where, "expected an object")
        if not isinstance(pool.get("id"), str) or not pool["id"]:
            fail(f"{where}.id", "expected a non-empty string")
        if pool["id"] in seen:
            fail(f"{where}.id", f"duplicate id {pool['id']!r}")
        seen.add(pool["id"])
        for key in ("tags", "relevantDocIds"):
            value = pool.get(key)
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                fail(f"{where}.{key}", "expected an array of strings")
        for k, doc_id in enumerate(pool["relevantDocIds"]):
            if problem := check_doc_id(doc_id):
                fail(f"{where}.relevantDocIds[{k}]", f"doc id {doc_id!r} {problem}")
        if not isinstance(pool.get("expectRefusal"), bool):
            fail(f"{where}.expectRefusal", f"expected true or false, got {pool.get('expectRefusal')!r}")
        candidates = pool.get("candidates")
        if not isinstance(candidates, list):
            fail(f"{where}.candidates", "expected an array")
        for j, candidate in enumerate(candidates):
            cwhere = f"{where}.candidates[{j}]"
            if not isinstance(candidate, Mapping):
                fail(cwhere, "expected an object")
            if "docId" not in candidate or not (
                candidate["docId"] is None or isinstance(candidate["docId"], str)
            ):
                fail(f"{cwhere}.docId", f"expected a string or null, got {candidate.get('docId')!r}")
            if candidate["docId"] is not None and (problem := check_doc_id(candidate["docId"])):
                fail(f"{cwhere}.docId", f"doc id {candidate['docId']!r} {problem}")
            for key in ("score", "semanticScore"):
                if not _is_number(candidate.get(key)):
                    fail(f"{cwhere}.{key}", f"expected a finite number, got {candidate.get(key)!r}")


def load_dump(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a dump file; errors name the file and, for JSON errors, the line."""
    source = str(path)
    try:
        dump = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise DumpError(f"{source}: cannot read: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise DumpError(f"{source}: not UTF-8 text: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise DumpError(f"{source}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from exc
    validate_dump(dump, source)
    return dump
