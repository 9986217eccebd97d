"""Checks of the Ollama API as plain functions over a ``Target``, and the shim target itself.

The protocol tests run them against ``nomad-lab serve``'s shim (a real model behind Ollama's API); the
live tests run the very same ones against a real Ollama when ``OLLAMA_HOST`` is set.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import ollama
import pytest

from nomad_lab.backends import ChatOptions, ChatRequest, collect_stream, open_backend
from nomad_lab.backends.ollama_native import OllamaBackend, probe_native
from nomad_lab.backends.openai_compat import OpenAICompatBackend
from nomad_lab.core.judge_prompt import ON_TOPIC_SCHEMA
from nomad_lab.core.token_estimator import TokenCalibrator
from nomad_lab.core.verdict_confidence import NO_LOGPROBS, TOP_LOGPROBS
from nomad_lab.serve.process import ServerProcess, free_port, shim_command
from nomad_lab.services.judge_service import RelevanceJudge

HTTP_TIMEOUT = 120.0
BURN = [
    {
        "text": "For a minor burn, hold the skin under cool running water for about twenty minutes, then "
        "cover it loosely with cling film. Do not use ice, butter or toothpaste."
    },
    {"text": "Large burns and burns to the face or hands need emergency care."},
]
QUESTIONS = ["How do I cool a burn?", "Should I put butter on a burn?", "Write me a poem about the sea."]


@dataclass
class Target:
    """An Ollama API under test and a way to see the request bodies that reached it."""

    base_url: str
    model: str
    sent: Callable[[str], list[dict[str, Any]]]  # path -> bodies sent to it, oldest first
    clear: Callable[[], None]
    client_kwargs: dict[str, Any] = field(default_factory=dict)
    compat_kwargs: dict[str, Any] = field(default_factory=dict)

    def native(self) -> OllamaBackend:
        return OllamaBackend(self.base_url, self.model, timeout=HTTP_TIMEOUT, **self.client_kwargs)

    def compat(self) -> OpenAICompatBackend:
        return OpenAICompatBackend(
            f"{self.base_url}/v1", self.model, timeout=HTTP_TIMEOUT, **self.compat_kwargs
        )

    def last(self, path: str) -> dict[str, Any]:
        bodies = self.sent(path)
        assert bodies, f"nothing was sent to {path}"
        return bodies[-1]


def keys_anywhere(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_anywhere(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_anywhere(v)}
    return set()


# ------------------------------------------------------------------------ checks shared with live


def check_detection_list_and_show(target: Target) -> None:
    assert probe_native(target.base_url) is True
    auto = target.base_url.replace("http://", "auto://", 1) + "/" + target.model
    assert isinstance(open_backend(auto), OllamaBackend)  # GET /api/tags answered models[] (SPEC §7.1)
    backend = target.native()
    assert target.model in [m.name for m in backend.list_models()]
    info = backend.show()
    assert info.context_length and info.context_length > 0
    assert isinstance(info.model_info.get("general.architecture"), str)
    assert info.parameter_size and info.quantization


def check_options_arrive_as_sent(target: Target) -> None:
    target.clear()
    options = ChatOptions(
        num_ctx=1024,
        num_predict=12,
        temperature=0.0,
        seed=42,
        top_p=0.9,
        top_k=20,
        min_p=0.05,
        repeat_penalty=1.1,
        keep_alive="5m",
        format=ON_TOPIC_SCHEMA,
        think=False,
    )
    result = target.native().chat(
        ChatRequest([{"role": "user", "content": "Is fire hot? Reply in JSON."}], options)
    )
    body = target.last("/api/chat")
    assert body["options"] == {
        "num_ctx": 1024,
        "num_predict": 12,
        "temperature": 0.0,
        "seed": 42,
        "top_p": 0.9,
        "top_k": 20,
        "min_p": 0.05,
        "repeat_penalty": 1.1,
    }
    assert (body["keep_alive"], body["format"], body["think"], body["stream"]) == (
        "5m",
        ON_TOPIC_SCHEMA,
        False,
        False,
    )
    assert result.structured and isinstance(json.loads(result.content)["on_topic"], bool)
    assert result.usage.prompt_tokens and result.usage.source == "ollama:prompt_eval_count"
    running = ollama.Client(host=target.base_url).ps().models
    loaded = [m for m in running if m.model == target.model]
    if loaded and loaded[0].context_length:  # older Ollama versions do not report it
        assert loaded[0].context_length == 1024  # num_ctx really set the context


def check_num_ctx_has_a_real_effect(target: Target) -> None:
    text = " ".join(f"item{i}" for i in range(150))
    messages = [{"role": "user", "content": f"Repeat the last item of this list: {text}"}]
    small = target.native().chat(
        ChatRequest(messages, ChatOptions(num_ctx=256, num_predict=4, temperature=0))
    )
    large = target.native().chat(
        ChatRequest(messages, ChatOptions(num_ctx=1024, num_predict=4, temperature=0))
    )
    assert large.usage.prompt_tokens > 400
    assert small.usage.prompt_tokens <= 256  # the server truncated to the window it was asked for


def check_stream(target: Target) -> None:
    target.clear()
    request = ChatRequest(
        [{"role": "user", "content": "Name a colour."}], ChatOptions(num_predict=8, temperature=0, seed=1)
    )
    chunks = list(target.native().chat_stream(request))
    result = collect_stream(chunks)
    assert len(chunks) >= 2 and chunks[-1].done
    assert result.content and result.usage.prompt_tokens and result.done_reason in ("stop", "length")
    assert target.last("/api/chat")["stream"] is True


def check_judge_call_parameters(target: Target) -> None:
    target.clear()
    result = RelevanceJudge(target.native()).judge(QUESTIONS[0], BURN)
    assert result.judged and isinstance(result.verdict, bool), result
    body = target.last("/api/chat")
    assert body["options"] == {"num_predict": 32, "temperature": 0}  # no seed, no sampler profile
    assert body["format"] == ON_TOPIC_SCHEMA and body["think"] is False
    assert "keep_alive" not in body
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["logprobs"] is True and body["top_logprobs"] == TOP_LOGPROBS  # P(true) asked every call
    # Ollama before logprobs support answers without them: then P(true) is null and the reason says so.
    assert (result.p_true is not None and 0 <= result.p_true <= 1) or result.confidence_reason == NO_LOGPROBS


def check_v1_never_carries_num_ctx(target: Target) -> None:
    target.clear()
    compat = target.compat()
    options = ChatOptions(num_ctx=4096, num_predict=8, temperature=0, seed=3)
    once = compat.chat(ChatRequest([{"role": "user", "content": "Name a fruit."}], options))
    streamed = collect_stream(
        compat.chat_stream(ChatRequest([{"role": "user", "content": "Name a fruit."}], options))
    )
    bodies = target.sent("/v1/chat/completions")
    assert len(bodies) >= 2
    for body in bodies:
        assert "num_ctx" not in keys_anywhere(body)
        assert body["max_tokens"] == 8 and body["seed"] == 3
    assert bodies[1]["stream_options"] == {"include_usage": True}
    assert once.usage.prompt_tokens and streamed.usage.prompt_tokens == once.usage.prompt_tokens
    assert streamed.usage.source == "openai:stream-usage"  # Ollama's /v1 honours include_usage


def check_calibrator_learns_from_real_counts(target: Target) -> None:
    calibrator = TokenCalibrator(None)
    judge = RelevanceJudge(target.native(), calibrator=calibrator)
    factors = []
    for question in QUESTIONS:
        result = judge.judge(question, BURN)
        assert result.prompt_tokens and result.prompt_tokens >= 32
        factors.append(calibrator.ratio_for(target.model))
    assert all(0.5 <= f <= 2.5 for f in factors) and factors[-1] != 1.0


CHECKS = [
    check_detection_list_and_show,
    check_options_arrive_as_sent,
    check_num_ctx_has_a_real_effect,
    check_stream,
    check_judge_call_parameters,
    check_v1_never_carries_num_ctx,
    check_calibrator_learns_from_real_counts,
]


# ------------------------------------------------------------------------------- the shim target


@contextmanager
def shim_target(num_ctx: int) -> Iterator[Target]:
    """``nomad-lab serve``'s shim over SmolLM2, its default window (what /v1 runs at) ``num_ctx``."""
    port = free_port()
    argv = shim_command("smollm2-135m", port, num_ctx=num_ctx, name="smollm2-135m")
    with ServerProcess(argv, host="127.0.0.1", port=port, ready_path="/api/version") as server:
        base = server.base_url

        def sent(path: str) -> list[dict[str, Any]]:
            return [r["body"] for r in httpx.get(f"{base}/_nomad/requests").json() if r["path"] == path]

        yield Target(base, "smollm2-135m:latest", sent, lambda: httpx.delete(f"{base}/_nomad/requests"))


@pytest.fixture(scope="session")
def shim() -> Iterator[Target]:
    with shim_target(num_ctx=2048) as target:  # Ollama's default window
        yield target
