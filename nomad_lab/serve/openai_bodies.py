"""The OpenAI-compatible ``/v1/chat/completions`` bodies, as Ollama's compat layer answers them.

Why apart from the app: one JSON completion or server-sent events, and ``response_format`` mapped onto
Ollama's ``format``; the routes (``ollama_server``) only validate and dispatch. A non-streamed answer
also carries llama.cpp server's ``timings`` (prompt tokens evaluated, their ms, tokens from the cache),
so a prefill study can run over the OpenAI-compatible wire too.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any

from nomad_lab.backends.base import ChatChunk, ChatRequest, Usage
from nomad_lab.serve.state import ShimState, wire_logprobs

log = logging.getLogger(__name__)


def v1_format(response_format: Any) -> Any:
    """OpenAI ``response_format`` → Ollama ``format``; both the json_object+schema and json_schema forms."""
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_schema":
        return (response_format.get("json_schema") or {}).get("schema") or "json"
    if response_format.get("type") == "json_object":
        return response_format.get("schema") or "json"
    return None


def v1_usage(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None or usage.prompt_tokens is None:
        return None
    completion = usage.completion_tokens or 0
    body: dict[str, Any] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": usage.prompt_tokens + completion,
    }
    if usage.cached_prompt_tokens is not None:
        body["prompt_tokens_details"] = {"cached_tokens": usage.cached_prompt_tokens}
    return body


def v1_timings(usage: Usage | None) -> dict[str, Any] | None:
    """llama.cpp server's ``timings`` object: tokens evaluated and their ms, tokens from the cache."""
    if usage is None or usage.prompt_tokens is None or usage.cached_prompt_tokens is None:
        return None
    return {
        "prompt_n": usage.prompt_tokens - usage.cached_prompt_tokens,
        "prompt_ms": usage.prompt_eval_ms,
        "cache_n": usage.cached_prompt_tokens,
        "predicted_n": usage.completion_tokens,
        "predicted_ms": usage.eval_ms,
    }


def v1_once(state: ShimState, request: ChatRequest) -> dict[str, Any]:
    result = state.backend.chat(request)
    message: dict[str, Any] = {"role": "assistant", "content": result.content}
    if result.thinking:
        message["reasoning"] = result.thinking
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": state.name,
        "system_fingerprint": "fp_ollama",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": result.done_reason or "stop",
                "logprobs": None
                if request.options.logprobs is None
                else {"content": wire_logprobs(result.logprobs)},
            }
        ],
        "usage": v1_usage(result.usage),
        **({"timings": t} if (t := v1_timings(result.usage)) else {}),
    }


def v1_sse(state: ShimState, request: ChatRequest, include_usage: bool) -> Iterator[bytes]:
    ident, created = f"chatcmpl-{uuid.uuid4().hex[:12]}", int(time.time())

    def event(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
        payload = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": state.name,
            "system_fingerprint": "fp_ollama",
            "choices": choices,
        }
        if usage is not None:
            payload["usage"] = usage
        return f"data: {json.dumps(payload)}\n\n".encode()

    try:
        final: ChatChunk | None = None
        for chunk in state.backend.chat_stream(request):
            if chunk.done and chunk.usage is not None:
                final = chunk
            if chunk.content or chunk.thinking:
                delta: dict[str, Any] = {"role": "assistant", "content": chunk.content}
                if chunk.thinking:
                    delta["reasoning"] = chunk.thinking
                yield event([{"index": 0, "delta": delta, "finish_reason": None}])
        reason = (final.done_reason if final else None) or "stop"
        yield event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": reason}])
        if include_usage:
            yield event([], v1_usage(final.usage if final else None))
    except Exception as exc:
        log.exception("v1 stream failed")
        yield f"data: {json.dumps({'error': {'message': str(exc)}})}\n\n".encode()
    yield b"data: [DONE]\n\n"
