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
``calls.CallLog``, whose methods ``Store`` has); since version 6, ``pair_scores``, the cross-encoder's
score per (model, question + passage window); since version 8, ``pool_scores``, the named score
columns of imported candidate-pool files (``pool_import``).

Each table group is its own small module holding its SQL, mixed into :class:`Store` here: ``index_tables``
(indexes, chunks, embeddings), ``runs`` (runs, cases, pools, run metrics), ``dumps`` (the reference's
candidate dump, SPEC §2.5), ``verdicts``, ``pair_scores`` (cross-encoder scores), ``study_rows``,
``notebook_cells``, ``calls`` (the model-call log) and ``answers`` (generation answers). This module opens the
file: lock wait, schema check, migrations.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nomad_lab.core.workspace import DEFAULT_STORE_PATH
from nomad_lab.store.answers import GenerationAnswers
from nomad_lab.store.cache_files import CacheFiles
from nomad_lab.store.calls import CallLog
from nomad_lab.store.dumps import DumpFormat
from nomad_lab.store.index_tables import IndexTables
from nomad_lab.store.notebook_cells import NotebookCells
from nomad_lab.store.pair_scores import PairScoreCache
from nomad_lab.store.pool_import import PoolImport
from nomad_lab.store.schema import MIGRATIONS, SCHEMA_VERSION
from nomad_lab.store.study_rows import StudyRows
from nomad_lab.store.tables import StoreError, StoreLockedError, StoreSchemaError
from nomad_lab.store.verdict_table import VerdictTable

__all__ = ["Store", "StoreError", "StoreLockedError", "StoreSchemaError", "record_study_rows"]

LOCK_WAIT_ENV = "NOMAD_LAB_STORE_WAIT"
DEFAULT_LOCK_WAIT_S = 10.0
_LOCK_HELD = re.compile(r"Conflicting lock is held in .*\(PID (\d+)\)")


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


class Store(
    IndexTables,
    DumpFormat,
    VerdictTable,
    PairScoreCache,
    StudyRows,
    NotebookCells,
    CallLog,
    GenerationAnswers,
    CacheFiles,
    PoolImport,
):
    """One DuckDB file per workspace. Use as a context manager, or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike[str], read_only: bool = False, lock_wait: float | None = None):
        """Open (or create) the store; ``lock_wait`` seconds (default: ``NOMAD_LAB_STORE_WAIT`` or 10)
        is how long to wait for another process to release the file before :class:`StoreLockedError`."""
        import duckdb  # heavy

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
        """One attempt at opening the file; whether it existed. Raises ``_Locked`` on a held lock. A
        read-only store keeps the connection its schema check opened (opening is most of its cost)."""
        exists = self.path.exists() and self.path.stat().st_size > 0
        if exists:
            probe = self._check_existing(duckdb)
            if self.read_only:
                self.con = probe
                return exists
            probe.close()
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

    def _check_existing(self, duckdb: Any) -> Any:
        """Read the schema version through a read-only connection, so a refused file is never written;
        that connection, open, once the version is one this package reads."""
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
        except BaseException:
            probe.close()
            raise
        found = row[0] if row else None
        if found is None or not found.isdigit() or not 1 <= int(found) <= SCHEMA_VERSION:
            probe.close()
            raise StoreSchemaError(
                f"{self.path}: store schema version {found} is not the version this nomad-lab uses "
                f"({SCHEMA_VERSION}); the file was left untouched. Use another --store path, or delete the "
                "file to rebuild it (its runs and cached verdicts are lost)."
            )
        self.found_version = int(found)
        return probe

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def record_study_rows(
    study: str,
    params: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    store_path: str | os.PathLike[str] | None = None,
) -> str:
    """Store one study run's rows in the workspace store (default path unless given); its run id."""
    with Store(store_path or DEFAULT_STORE_PATH) as store:
        return store.put_study_rows(study, params, rows)
