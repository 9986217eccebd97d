"""A Backend that answers like a small instruct model would, deterministically, and records every request.

Why a scripted backend next to the real one: the pipeline's protocol (what it sends, how often it asks
``show()``, what it does with usage, with a rewrite reply, with a failure) must be asserted exactly and in
milliseconds; the real embedded model is exercised separately (marked slow).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from nomad_lab.backends import ChatRequest, ChatResult, ModelEntry, ModelInfo, Usage
from nomad_lab.core.token_estimator import estimate_messages_tokens


class ScriptedBackend:
    """``rewrite`` answers constrained (``format``) calls; ``answer`` answers chat calls. The reported prompt
    count is ``ceil(1.25 × uncalibrated estimate)``, so the token error is known in advance. ``fail`` may
    return an exception to raise for a request (BaseException too: a KeyboardInterrupt mid-run)."""

    kind = "scripted"

    def __init__(
        self,
        model: str = "scripted:1.5b",
        *,
        parameter_size: str = "1.5B",
        context_length: int = 8192,
        rewrite: str = "bleach drops per gallon",
        answer: Callable[[ChatRequest], str] = lambda request: "Add **8 drops** per gallon.",
        fail: Callable[[ChatRequest, int], BaseException | None] | None = None,
    ) -> None:
        self.model = model
        self.parameter_size = parameter_size
        self.context_length = context_length
        self.rewrite = rewrite
        self.answer = answer
        self.fail = fail
        self.requests: list[ChatRequest] = []
        self.show_calls = 0

    def show(self, model: str | None = None) -> ModelInfo:
        self.show_calls += 1
        return ModelInfo(
            name=model or self.model, context_length=self.context_length, parameter_size=self.parameter_size
        )

    def list_models(self) -> list[ModelEntry]:
        return [ModelEntry(self.model)]

    def chat(self, request: ChatRequest) -> ChatResult:
        self.requests.append(request)
        if self.fail is not None and (failure := self.fail(request, len(self.requests))) is not None:
            raise failure
        real = math.ceil(1.25 * estimate_messages_tokens(request.messages, 1.0))
        if request.options.format is not None:
            return ChatResult(json.dumps({"queries": [self.rewrite]}), usage=Usage(real, 9), structured=True)
        return ChatResult(self.answer(request), usage=Usage(real, 12, source="scripted"), done_reason="stop")

    def chat_stream(self, request: ChatRequest):  # pragma: no cover - the pipeline does not stream
        raise NotImplementedError

    @property
    def chat_requests(self) -> list[ChatRequest]:
        """The answer calls (not rewrites or judges, which carry a response format)."""
        return [r for r in self.requests if r.options.format is None]
