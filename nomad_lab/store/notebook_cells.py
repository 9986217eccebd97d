"""The notebook-cells table: one row per executed notebook grid cell, so a rerun of a grid skips it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from nomad_lab.store.tables import TableGroup

__all__ = ["NotebookCells"]


class NotebookCells(TableGroup):
    """Methods of :class:`nomad_lab.store.Store` over ``notebook_cells``."""

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
