"""The store's model-call log and the generation answers those calls produced (mixed into ``Store``).

Why here: every SQL statement lives in the store package. ``services.model_calls.chat_call`` hands each
chat call to :meth:`CallLog.record_call` (the store is one possible sink); the generation eval reads and
writes its answers through :meth:`CallLog.get_answer` / :meth:`CallLog.put_answer`, keyed like the verdict
cache by a hash of exactly what was asked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from nomad_lab.store.records import ModelCall

CALL_COLUMNS = "model, purpose, request_sha256, prompt_tokens, completion_tokens, ms, failure, created_at"
TOTAL_NAMES = ("model", "purpose", "calls", "failures", "promptTokens", "completionTokens", "meanMs", "maxMs")


class CallLog:
    """Methods of :class:`nomad_lab.store.Store` over ``model_calls`` and ``generation_answers``."""

    con: Any

    # ---------------------------------------------------------------- the model-call log

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

    # ---------------------------------------------------------------- generation answers

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
