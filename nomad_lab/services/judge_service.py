"""The relevance judge as a model call, around the pure core (SPEC §1.4–1.6); the rewrite: ``query_rewrite``.

Why it fails OPEN: the judge is an optional filter in front of the answer. If the call times out, the
server errors, or the model replies with something unusable, dropping the retrieved passages would
turn a transport hiccup into a wrong "I don't know"; so every failure keeps all chunks unjudged and
records why. Nothing here raises into the caller.

The call goes through ``model_calls.chat_call``: it feeds the ``TokenCalibrator`` with the backend's real
prompt count (how the per-model factor k of SPEC §3.3 is learned) and logs the call to a sink if given.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from nomad_lab.backends.base import Backend, BackendError, ChatOptions, ChatRequest, ChatResult, Usage
from nomad_lab.core.jsstring import js_trim
from nomad_lab.core.judge_prompt import (
    JUDGE_SYSTEM_PROMPT,
    ON_TOPIC_SCHEMA,
    RELEVANCE_CHECK_MAX_TOKENS,
    build_judge_input,
    pick_on_topic,
    resolve_structured,
)
from nomad_lab.core.token_estimator import TokenCalibrator
from nomad_lab.core.verdict_confidence import TOP_LOGPROBS, Confidence, confidence_from_choices
from nomad_lab.services.model_calls import CallSink, chat_call, failure_reason

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
    p_true: float | None = None
    """P(on_topic = true) at the verdict token (``core.verdict_confidence``); else None and a reason."""
    confidence_reason: str | None = None
    cached_prompt_tokens: int | None = None


LOGPROBS_REFUSED = "logprobs-refused"
"""Confidence reason when the server refused a request carrying ``logprobs`` (HTTP 400/422, or an error
naming logprobs: llama-cpp-python's server answers 500 "logprobs is not supported" unless started with
``logits_all``) and then answered the same request without them. No other failure is retried."""


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
        confidence: bool = True,
        sink: CallSink | None = None,
    ) -> None:
        """``thinking_capable`` None: ask ``backend.show()`` once (SPEC §1.4: lets the OpenAI path send
        ``reasoning_effort: "none"``); an unanswered show means not capable. ``confidence`` asks for
        token log-probabilities so every verdict carries P(true) where the backend can give it. ``sink``
        logs each call."""
        self.backend = backend
        self.model = model or backend.model or ""
        self.thinking_capable = thinking_capable
        self.calibrator = calibrator
        self.confidence = confidence
        self.logprobs_refused = False
        """Set once the server refused the field: later calls do not ask again (one wasted request)."""
        self.sink = sink

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
            logprobs=TOP_LOGPROBS if self.confidence and not self.logprobs_refused else None,
        )

    def _call(self, messages: list[dict[str, str]]) -> tuple[ChatResult, str | None]:
        """The chat call, and a confidence reason if the server refused the ``logprobs`` fields."""
        options = self.options()
        if self.confidence and options.logprobs is None:  # refused before: not asked again
            return self._chat(messages, options), LOGPROBS_REFUSED
        try:
            return self._chat(messages, options), None
        except BackendError as exc:
            refused = exc.status in (400, 422) or (exc.status is not None and "logprobs" in exc.detail)
            if options.logprobs is None or not refused:
                raise
        result = self._chat(messages, replace(options, logprobs=None))
        self.logprobs_refused = True
        return result, LOGPROBS_REFUSED

    def _chat(self, messages: list[dict[str, str]], options: ChatOptions) -> ChatResult:
        """One judge call through the model-call boundary (calibrator fed, call logged)."""
        request = ChatRequest(messages, options, self.model or None)
        return chat_call(
            self.backend,
            request,
            purpose="judge",
            model=self.model,
            calibrator=self.calibrator,
            sink=self.sink,
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
        confidence = Confidence(None, None)
        try:
            result, refused = self._call(messages)
            verdict = resolve_structured(js_trim(result.content), pick_on_topic, result.structured)
            reason = verdict.reason
            if self.confidence:
                confidence = (
                    Confidence(None, refused) if refused else confidence_from_choices(result.logprobs)
                )
        except Exception as exc:  # fail open on anything: transport, protocol, or our own bug
            verdict, reason = None, failure_reason(exc)
        ms = (time.perf_counter() - started) * 1e3
        usage = result.usage if result is not None else Usage()
        common = {
            "ms": ms,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "p_true": confidence.p_true,
            "confidence_reason": confidence.reason,
            "cached_prompt_tokens": usage.cached_prompt_tokens,
        }
        if verdict is None or not verdict.ok:
            log.warning("relevance check on %s failed open: %s", self.model, reason)
            return JudgeResult(chunks, 0, False, None, reason, **common)
        if verdict.value:
            return JudgeResult(chunks, 0, True, True, None, **common)
        return JudgeResult([], len(chunks), True, False, None, **common)


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
    with_confidence: int = 0
    confidence_reasons: dict[str, int] = field(default_factory=dict)
    """Why a verdict has no P(true), counted (``never-asked``: cached before confidence existed)."""

    def record(self, result: JudgeResult) -> None:
        if result.reason in NOT_CALLED_REASONS:
            return
        if result.p_true is not None:
            self.with_confidence += 1
        else:
            key = result.confidence_reason or "never-asked"
            self.confidence_reasons[key] = self.confidence_reasons.get(key, 0) + 1
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
            f"{self.failures} failed open · mean {round(self.mean_ms)}ms max {round(self.max_ms)}ms · "
            f"P(true) on {self.with_confidence}/{self.calls}"
            + "".join(f" · {n} {why}" for why, n in sorted(self.confidence_reasons.items()))
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
