"""The query rewrite as a model call (SPEC §5.5): a standalone retrieval query from the conversation.

Why it fails OPEN like the judge: the rewrite only sharpens retrieval; a timeout, a server error or an
unusable reply falls back to the raw last user message (``reason`` says why), never into the caller.
The call goes through ``model_calls.chat_call`` (calibrator fed, call logged to a sink if given).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nomad_lab.backends.base import Backend, ChatOptions, ChatRequest, Usage
from nomad_lab.core.jsstring import js_trim
from nomad_lab.core.judge_prompt import resolve_structured
from nomad_lab.core.prompts import (
    QUERIES_SCHEMA,
    QUERY_REWRITE_LEGACY_SYSTEM_PROMPT,
    QUERY_REWRITE_MAX_TOKENS,
    QUERY_REWRITE_SYSTEM_PROMPT,
)
from nomad_lab.core.token_estimator import TokenCalibrator
from nomad_lab.services.model_calls import CallSink, chat_call, failure_reason

__all__ = ["RewriteResult", "pick_first_query", "rewrite_prompt", "rewrite_query"]

REWRITE_WINDOW = 6
ASSISTANT_PREVIEW_CHARS = 200


@dataclass(frozen=True)
class RewriteResult:
    """The retrieval query and whether it came from the model; ``reason`` says why not."""

    query: str
    did_rewrite: bool
    reason: str | None = None
    ms: float = 0.0
    usage: Usage | None = None


def pick_first_query(value: object) -> str | None:
    """The first non-empty trimmed entry of ``queries``, else None."""
    if isinstance(value, Mapping) and isinstance(value.get("queries"), list):
        for entry in value["queries"]:
            if isinstance(entry, str) and js_trim(entry):
                return js_trim(entry)
    return None


def _conversation(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [m for m in messages if m.get("role") in ("user", "assistant")]


def rewrite_prompt(messages: Sequence[Mapping[str, Any]]) -> str:
    """The rewrite's user turn: the last 6 conversation messages, assistant turns cut at 200 chars."""
    lines = []
    for message in _conversation(messages)[-REWRITE_WINDOW:]:
        content = str(message.get("content") or "")
        if message.get("role") == "user":
            lines.append(f'User: "{content}"')
        else:
            cut = content[:ASSISTANT_PREVIEW_CHARS] + (
                "..." if len(content) > ASSISTANT_PREVIEW_CHARS else ""
            )
            lines.append(f'Assistant: "{cut}"')
    return "Conversation:\n" + "\n".join(lines) + "\n\nRewritten Query:"


def rewrite_query(
    backend: Backend,
    model: str | None,
    messages: Sequence[Mapping[str, Any]],
    *,
    has_documents: bool = True,
    skip: bool = False,
    calibrator: TokenCalibrator | None = None,
    sink: CallSink | None = None,
    structured: bool = True,
) -> RewriteResult:
    """SPEC §5.5: a standalone retrieval query from the conversation, on the tasks model.

    ``structured`` (the reference's current form, the default) asks for ``{"queries": [...]}`` under
    the schema with thinking off and takes the first non-empty entry; ``structured=False`` is the
    earlier free-text rewrite (no schema), whose trimmed text is the query when non-empty.

    Skipped (raw last user message) without documents, when asked, or with fewer than 2 user messages
    among the last 6 conversation messages. A constrained reply that does not parse, an empty result
    or any exception falls back to the raw message; an unconstrained backend's raw text is used as is.
    """
    conversation = _conversation(messages)
    raw = next((str(m.get("content") or "") for m in reversed(conversation) if m.get("role") == "user"), "")
    if not has_documents:
        return RewriteResult(raw, False, "no-documents")
    if skip:
        return RewriteResult(raw, False, "skipped")
    if sum(1 for m in conversation[-REWRITE_WINDOW:] if m.get("role") == "user") < 2:
        return RewriteResult(raw, False, "single-turn")

    system = QUERY_REWRITE_SYSTEM_PROMPT if structured else QUERY_REWRITE_LEGACY_SYSTEM_PROMPT
    sent = [{"role": "system", "content": system}, {"role": "user", "content": rewrite_prompt(messages)}]
    options = ChatOptions(
        num_predict=QUERY_REWRITE_MAX_TOKENS,
        temperature=0,
        think=False,
        format=QUERIES_SCHEMA if structured else None,
    )
    started = time.perf_counter()
    try:
        result = chat_call(
            backend, ChatRequest(sent, options, model), purpose="rewrite", calibrator=calibrator, sink=sink
        )
    except Exception as exc:
        return RewriteResult(raw, False, failure_reason(exc), (time.perf_counter() - started) * 1e3)
    ms = (time.perf_counter() - started) * 1e3
    if not structured:
        text = js_trim(result.content).splitlines()[0] if js_trim(result.content) else ""
        if text:
            return RewriteResult(text, True, "free-text", ms, result.usage)
        return RewriteResult(raw, False, "empty", ms, result.usage)
    parsed = resolve_structured(js_trim(result.content), pick_first_query, result.structured)
    if parsed.ok:
        return RewriteResult(parsed.value, True, None, ms, result.usage)
    text = js_trim(result.content)
    if not result.structured and text:
        return RewriteResult(text, True, "unconstrained", ms, result.usage)
    return RewriteResult(raw, False, parsed.reason or "empty", ms, result.usage)
