"""The store's model-call log (mixed into ``Store``).

Why here: every SQL statement lives in the store package. ``services.model_calls.chat_call`` hands each
chat call to :meth:`CallLog.record_call` (the store is one possible sink); the answers those calls
produced for the generation eval are ``answers.GenerationAnswers``.
"""

from __future__ import annotations

from typing import Any

from nomad_lab.store.records import ModelCall
from nomad_lab.store.tables import TableGroup

CALL_COLUMNS = "model, purpose, request_sha256, prompt_tokens, completion_tokens, ms, failure, created_at"
TOTAL_NAMES = ("model", "purpose", "calls", "failures", "promptTokens", "completionTokens", "meanMs", "maxMs")


class CallLog(TableGroup):
    """Methods of :class:`nomad_lab.store.Store` over ``model_calls``."""

    def has_call_log(self) -> bool:
        """Whether this store has the call log (a read-only open of an older store has none: no calls)."""
        found = self.con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'model_calls'"
        ).fetchone()
        return bool(found[0])

    def record_call(self, call: ModelCall) -> None:
        """Append one call (a single autocommitted insert: a crash loses at most the call in flight)."""
        self.con.execute(
            f"INSERT INTO model_calls ({CALL_COLUMNS}, ok) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                call.model,
                call.purpose,
                call.request_sha256,
                call.prompt_tokens,
                call.completion_tokens,
                call.ms,
                call.failure,
                call.created_at,
                call.ok,
            ],
        )

    def model_calls(
        self, *, model: str | None = None, purpose: str | None = None, limit: int | None = None
    ) -> list[ModelCall]:
        """The logged calls in the order they were made; ``limit`` keeps the latest ones."""
        if not self.has_call_log():
            return []
        rows = self.con.execute(
            f"SELECT {CALL_COLUMNS} FROM model_calls WHERE (? IS NULL OR model = ?) "
            "AND (? IS NULL OR purpose = ?) ORDER BY call_id DESC LIMIT ?",
            [model, model, purpose, purpose, limit],
        ).fetchall()
        return [ModelCall(*row) for row in reversed(rows)]

    def model_call_totals(self) -> list[dict[str, Any]]:
        """Per (model, purpose): calls, failures, summed prompt/completion tokens and mean/max ms."""
        if not self.has_call_log():
            return []
        rows = self.con.execute(
            "SELECT model, purpose, count(*), count(*) FILTER (WHERE NOT ok), sum(prompt_tokens), "
            "sum(completion_tokens), avg(ms), max(ms) FROM model_calls GROUP BY model, purpose "
            "ORDER BY model, purpose"
        ).fetchall()
        return [dict(zip(TOTAL_NAMES, row, strict=True)) for row in rows]
