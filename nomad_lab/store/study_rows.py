"""The study-rows table: the measured rows of a study run (estimator, placement …), one run id per run."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from nomad_lab.store.records import new_run_id
from nomad_lab.store.tables import TableGroup

__all__ = ["StudyRows"]


class StudyRows(TableGroup):
    """Methods of :class:`nomad_lab.store.Store` over ``study_rows``."""

    def put_study_rows(self, study: str, params: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> str:
        """One study run's rows, all or none; returns its run id (a run with no rows stores nothing)."""
        run_id = new_run_id()
        now = datetime.now(UTC)
        with self.transaction():
            self.insert_rows(
                "INSERT INTO study_rows",
                ("VARCHAR", "VARCHAR", "TIMESTAMPTZ", "VARCHAR", "INTEGER", "VARCHAR"),
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
