"""The run tables: ``runs``, ``cases`` (per-question results), ``pools`` (the FULL pre-floor candidate pool
of every question) and ``run_metrics``, written together in one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

from nomad_lab.store.records import CaseRecord, PoolEntry, RunRecord
from nomad_lab.store.tables import StoreError, TableGroup

__all__ = ["RunTables"]


_CASE_TYPES = (
    "VARCHAR", "VARCHAR", "INTEGER", "VARCHAR", "VARCHAR", "VARCHAR[]", "BOOLEAN", "VARCHAR[]",
    "VARCHAR", "VARCHAR", "VARCHAR",
)  # fmt: skip
_POOL_TYPES = ("VARCHAR", "VARCHAR", "INTEGER", "VARCHAR", "VARCHAR", "DOUBLE", "DOUBLE")
_METRIC_TYPES = ("VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE", "DOUBLE", "DOUBLE", "VARCHAR")


class RunTables(TableGroup):
    """Methods of :class:`nomad_lab.store.Store` over ``runs``, ``cases``, ``pools`` and ``run_metrics``."""

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
            case_rows = [
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
                    c.refusal_kind,
                ]
                for c in cases
            ]
            self.insert_rows(
                "INSERT INTO cases (run_id, golden_id, position, suite, query, tags, expect_refusal, "
                "relevant_doc_ids, result, judge, refusal_kind)",
                _CASE_TYPES,
                case_rows,
            )
            rows = [
                [run.run_id, golden_id, p.rank, p.doc_id, p.chunk_id, p.score, p.semantic_score]
                for golden_id, entries in pools.items()
                for p in entries
            ]
            self.insert_rows("INSERT INTO pools", _POOL_TYPES, rows)
            self.insert_rows("INSERT INTO run_metrics", _METRIC_TYPES, [[run.run_id, *m] for m in metrics])
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
            "SELECT golden_id, position, tags, expect_refusal, relevant_doc_ids, suite, query, result, "
            "judge, refusal_kind FROM cases WHERE run_id = ? ORDER BY position",
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
                r[9],
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

    def get_run_metrics(
        self, run_id: str
    ) -> list[tuple[str, str, float | None, float | None, float | None, str | None]]:
        """The run's ``(scope, name, value, low, high, method)`` rows, by scope and name."""
        return [
            tuple(row)
            for row in self.con.execute(
                "SELECT scope, name, value, ci_low, ci_high, ci_method FROM run_metrics WHERE run_id = ? "
                "ORDER BY scope, name",
                [run_id],
            ).fetchall()
        ]

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

    def run_question_counts(self) -> dict[str, int]:
        """How many questions (cases) each stored run holds, by run id."""
        rows = self.con.execute("SELECT run_id, count(*) FROM cases GROUP BY run_id").fetchall()
        return {run_id: int(n) for run_id, n in rows}

    def run_ids(self, kind: str | None = None) -> list[str]:
        """Every run id of this kind (None: all), oldest first."""
        rows = self.con.execute(
            "SELECT run_id FROM runs WHERE ? IS NULL OR kind = ? ORDER BY created_at", [kind, kind]
        ).fetchall()
        return [row[0] for row in rows]
