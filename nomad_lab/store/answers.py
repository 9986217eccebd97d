"""The generation answers: eval generation's answer cache, keyed like the verdict cache by a hash of
exactly what was asked (parameter key, golden, golden-input hash, repeat).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from nomad_lab.store.tables import TableGroup

__all__ = ["GenerationAnswers"]


class GenerationAnswers(TableGroup):
    """Methods of :class:`nomad_lab.store.Store` over ``generation_answers``."""

    def get_answer(
        self, params_key: str, golden_id: str, golden_sha256: str, repeat: int
    ) -> dict[str, Any] | None:
        """The stored observation of one (parameter key, golden, golden-input hash, repeat), if any."""
        row = self.con.execute(
            "SELECT observation FROM generation_answers WHERE params_key = ? AND golden_id = ? "
            "AND golden_sha256 = ? AND repeat = ?",
            [params_key, golden_id, golden_sha256, repeat],
        ).fetchone()
        return None if row is None else json.loads(row[0])

    def put_answer(
        self,
        params_key: str,
        params: Mapping[str, Any],
        golden_id: str,
        golden_sha256: str,
        repeat: int,
        observation: Mapping[str, Any],
    ) -> None:
        """Store (or replace) one answer's observation as soon as it exists."""
        self.con.execute(
            "INSERT OR REPLACE INTO generation_answers VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                params_key,
                golden_id,
                golden_sha256,
                repeat,
                json.dumps(params),
                json.dumps(observation),
                datetime.now(UTC),
            ],
        )
