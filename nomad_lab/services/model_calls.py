"""The model-call boundary: every chat call of the services goes through :func:`chat_call`.

Why one door: the judge, the query rewrite, the answer and the eval's warm-up are the same kind of act
(messages in, a reply and token counts out), so they are timed, calibrated, labelled on failure and logged
the same way. A call's real prompt count feeds the ``TokenCalibrator`` against the uncalibrated estimate
of the exact messages sent (how the per-model factor k of SPEC §3.3 is learned), and the call is recorded
(model, request hash, purpose, prompt/completion tokens, ms, failure reason) in a :class:`CallSink`:
the workspace ``Store`` in the eval and the studies, a :class:`CallBuffer` on a Dask worker, nothing for
a pipeline without a store. The backend's exception still reaches the caller, who decides whether to fail
open (judge, rewrite) or not (answer).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from nomad_lab.backends.base import Backend, BackendError, ChatRequest, ChatResult, Usage
from nomad_lab.core.token_estimator import TokenCalibrator, estimate_messages_tokens
from nomad_lab.store import ModelCall, json_sha256

__all__ = [
    "CallBuffer",
    "CallSink",
    "chat_call",
    "failure_reason",
    "feed_calibrator",
    "request_sha256",
]


class CallSink(Protocol):
    """Where logged calls go: ``nomad_lab.store.Store`` is one (it also has ``record_call``)."""

    def record_call(self, call: ModelCall) -> None: ...


class CallBuffer(list[ModelCall]):
    """A sink that keeps calls in memory, for a process that may not open the store (a Dask worker)."""

    def record_call(self, call: ModelCall) -> None:
        self.append(call)


def feed_calibrator(
    calibrator: TokenCalibrator | None, model: str, messages: Sequence[Mapping[str, Any]], usage: Usage | None
) -> float | None:
    """Feed one call's real prompt count against the uncalibrated estimate of the exact messages sent.

    Missing counts are skipped (older Ollama omitted ``prompt_eval_count`` on cached prompts; some
    OpenAI-compatible streams carry no usage); the calibrator itself skips tiny prompts.
    """
    if calibrator is None or usage is None or usage.prompt_tokens is None:
        return None
    return calibrator.observe(model, estimate_messages_tokens(messages, 1.0), usage.prompt_tokens)


def failure_reason(exc: BaseException) -> str:
    """A short label for a failed call: the backend's own reason, else the exception type."""
    if isinstance(exc, BackendError):
        return exc.reason
    if isinstance(exc, TimeoutError):
        return "timeout"
    return f"error:{type(exc).__name__}"


def request_sha256(model: str, request: ChatRequest) -> str:
    """The log's key of a request: the model asked, the exact messages and every option sent."""
    return json_sha256(
        {"model": model, "messages": request.messages, "options": dataclasses.asdict(request.options)}
    )


def chat_call(
    backend: Backend,
    request: ChatRequest,
    *,
    purpose: str,
    model: str | None = None,
    calibrator: TokenCalibrator | None = None,
    sink: CallSink | None = None,
) -> ChatResult:
    """Make one chat call: feed the calibrator with its usage and log it to ``sink``; exceptions propagate.

    ``model`` names the model for the calibrator and the log (default: the request's, else the backend's).
    A failed call is logged with its :func:`failure_reason` and no tokens, then re-raised; an interrupt
    (``KeyboardInterrupt``) is not a model failure and is not logged.
    """
    name = model or request.model or backend.model or ""
    started = time.perf_counter()
    try:
        result = backend.chat(request)
    except Exception as exc:
        if sink is not None:
            ms = (time.perf_counter() - started) * 1e3
            sink.record_call(
                ModelCall(name, purpose, request_sha256(name, request), None, None, ms, failure_reason(exc))
            )
        raise
    ms = (time.perf_counter() - started) * 1e3
    feed_calibrator(calibrator, name, request.messages, result.usage)
    if sink is not None:
        usage = result.usage
        sink.record_call(
            ModelCall(
                name, purpose, request_sha256(name, request), usage.prompt_tokens, usage.completion_tokens, ms
            )
        )
    return result
