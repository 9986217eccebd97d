"""The judge-verdict table: one verdict per (judge model spec, SHA-256 of the exact judge input), ever.

Whether a stored verdict may be reused is the verdict cache's rule (``services.verdict_cache``), not
this table's.
"""

from __future__ import annotations

from datetime import UTC, datetime

from nomad_lab.store.records import Verdict
from nomad_lab.store.tables import TableGroup

__all__ = ["VerdictTable"]


class VerdictTable(TableGroup):
    """Methods of :class:`nomad_lab.store.Store` over ``judge_verdicts``."""

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
