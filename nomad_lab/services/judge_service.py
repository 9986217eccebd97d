"""The relevance judge and the query rewrite as model calls, around the pure core (SPEC §1.4–1.6, §5.5).

Why it fails OPEN: the judge is an optional filter in front of the answer. If the call times out, the
server errors, or the model replies with something unusable, dropping the retrieved passages would
turn a transport hiccup into a wrong "I don't know"; so every failure keeps all chunks unjudged and
records why. Nothing here raises into the caller.

Every call can also feed the ``TokenCalibrator`` with the backend's real prompt count
(``model_calls.feed_calibrator``), which is how the per-model factor k of SPEC §3.3 is learned.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nomad_lab.backends.base import Backend, ChatOptions, ChatRequest, ChatResult, Usage
from nomad_lab.core.estimator import TokenCalibrator
from nomad_lab.core.jsstring import js_trim
from nomad_lab.core.judge import (
    JUDGE_SYSTEM_PROMPT,
    ON_TOPIC_SCHEMA,
    RELEVANCE_CHECK_MAX_TOKENS,
    build_judge_input,
    pick_on_topic,
    resolve_structured,
)
from nomad_lab.core.prompts import (
    QUERIES_SCHEMA,
    QUERY_REWRITE_LEGACY_SYSTEM_PROMPT,
    QUERY_REWRITE_MAX_TOKENS,
    QUERY_REWRITE_SYSTEM_PROMPT,
)
from nomad_lab.services.model_calls import failure_reason, feed_calibrator

log = logging.getLogger(__name__)

NOT_CALLED_REASONS = ("no-chunks", "blank-question")
"""Unjudged results for which no model call was made; ``JudgeStats`` does not count them as calls."""


# ------------------------------------------------------------------------------------------ judge


@dataclass(frozen=True)
class JudgeResult:
    """One judge decision. ``judged`` False means failed open (or not called); ``reason`` says why."""

    kept: list[Any]
    rejected: int
    judged: bool
    verdict: bool | None = None
    reason: str | None = None
    ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class RelevanceJudge:
    """One grammar-constrained "are these passages about the question?" call per retrieved set.

    All-or-nothing by design (SPEC §1.5): ``true`` keeps every chunk, ``false`` drops every chunk.
    Call parameters are exactly SPEC §1.4: ``num_predict`` 32, temperature 0, ``think`` False,
    ``format`` = ``ON_TOPIC_SCHEMA``, no seed, no sampler profile, no ``keep_alive``.
    """

    def __init__(
        self,
        backend: Backend,
        model: str | None = None,
        *,
        thinking_capable: bool | None = None,
        calibrator: TokenCalibrator | None = None,
    ) -> None:
        """``thinking_capable`` None: ask ``backend.show()`` once (SPEC §1.4: lets the OpenAI path send
        ``reasoning_effort: "none"``); an unanswered show means not capable."""
        self.backend = backend
        self.model = model or backend.model or ""
        self.thinking_capable = thinking_capable
        self.calibrator = calibrator

    def _thinking_capable(self) -> bool:
        if self.thinking_capable is None:
            try:
                self.thinking_capable = self.backend.show(self.model or None).has_thinking
            except Exception:  # show is advisory here; the judge call itself decides success
                return False
        return self.thinking_capable

    def messages(self, question: str, passages: Sequence[Any]) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": JUDGE_SYSTEM_PROMPT},
            {"role": "user", "content": build_judge_input(question, passages)},
        ]

    def options(self) -> ChatOptions:
        return ChatOptions(
            num_predict=RELEVANCE_CHECK_MAX_TOKENS,
            temperature=0,
            think=False,
            thinking_capable=self._thinking_capable(),
            format=ON_TOPIC_SCHEMA,
        )

    def judge(self, question: str, passages: Sequence[Any]) -> JudgeResult:
        """Judge the set; never raises. An empty set or blank question is unjudged without a call."""
        chunks = list(passages or [])
        if not chunks:
            return JudgeResult(chunks, 0, False, reason="no-chunks")
        if not js_trim(question or ""):
            return JudgeResult(chunks, 0, False, reason="blank-question")

        started = time.perf_counter()
        messages = self.messages(question, chunks)
        result: ChatResult | None = None
        try:
            result = self.backend.chat(ChatRequest(messages, self.options(), self.model or None))
            feed_calibrator(self.calibrator, self.model, messages, result.usage)
            verdict = resolve_structured(js_trim(result.content), pick_on_topic, result.structured)
            reason = verdict.reason
        except Exception as exc:  # fail open on anything: transport, protocol, or our own bug
            verdict, reason = None, failure_reason(exc)
        ms = (time.perf_counter() - started) * 1e3
        usage = result.usage if result is not None else Usage()

        if verdict is None or not verdict.ok:
            log.warning("relevance check on %s failed open: %s", self.model, reason)
            return JudgeResult(
                chunks, 0, False, None, reason, ms, usage.prompt_tokens, usage.completion_tokens
            )
        if verdict.value:
            return JudgeResult(chunks, 0, True, True, None, ms, usage.prompt_tokens, usage.completion_tokens)
        return JudgeResult(
            [], len(chunks), True, False, None, ms, usage.prompt_tokens, usage.completion_tokens
        )


@dataclass
class JudgeStats:
    """The eval harness's judge summary (SPEC §1.5): calls, fail-opens, rejected chunks, timing."""

    model: str
    calls: int = 0
    failures: int = 0
    rejected: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    reasons: dict[str, int] = field(default_factory=dict)

    def record(self, result: JudgeResult) -> None:
        if result.reason in NOT_CALLED_REASONS:
            return
        self.calls += 1
        self.rejected += result.rejected
        self.total_ms += result.ms
        self.max_ms = max(self.max_ms, result.ms)
        if not result.judged:
            self.failures += 1
            key = result.reason or "unknown"
            self.reasons[key] = self.reasons.get(key, 0) + 1

    @property
    def mean_ms(self) -> float:
        return self.total_ms / self.calls if self.calls else 0.0

    def line(self) -> str:
        return (
            f"Relevance check: {self.model} · {self.calls} calls · rejected {self.rejected} chunk(s) · "
            f"{self.failures} failed open · mean {round(self.mean_ms)}ms max {round(self.max_ms)}ms"
        )


# ------------------------------------------------------------------------------------ tasks model


def resolve_tasks_model(backend: Backend, chat_model: str, configured: str | None) -> str:
    """SPEC §1.6: the configured tasks model if it is installed (exact name), else the chat model.

    The installed list excludes names containing "embed"; a listing error also falls back.
    """
    name = (configured or "").strip()
    if not name:
        return chat_model
    try:
        installed = {entry.name for entry in backend.list_models() if "embed" not in entry.name}
    except Exception as exc:
        log.warning("could not list models (%s); using the chat model for tasks", failure_reason(exc))
        return chat_model
    if name in installed:
        return name
    log.warning("tasks model %r is not installed; using the chat model %r", name, chat_model)
    return chat_model


# ---------------------------------------------------------------------------------- query rewrite

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
        result = backend.chat(ChatRequest(sent, options, model))
    except Exception as exc:
        return RewriteResult(raw, False, failure_reason(exc), (time.perf_counter() - started) * 1e3)
    ms = (time.perf_counter() - started) * 1e3
    feed_calibrator(calibrator, model or backend.model or "", sent, result.usage)
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
