"""The Ollama ``/api/chat`` response bodies: one JSON answer, or NDJSON lines ending in the stats line.

Why apart from the app: the routes (``ollama_server``) parse and validate requests; these build exactly
Ollama's documented response shapes from the backend's results.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any

from nomad_lab.backends.base import ChatChunk, ChatRequest, Usage
from nomad_lab.serve.state import ShimState, now_iso, wire_logprobs

log = logging.getLogger(__name__)

SHOW_ARRAY_LIMIT = 5
"""Ollama withholds longer metadata arrays from ``/api/show`` unless the request says ``verbose``."""


def ollama_stats(usage: Usage | None, total_ms: float, load_ms: float) -> dict[str, Any]:
    """Ollama's metrics: ``prompt_eval_count`` is the whole prompt (cached tokens included, as Ollama
    counts it since 0.2), ``prompt_eval_cached_count`` the tokens read from the KV cache (as newer
    Ollama sends it), ``prompt_eval_duration`` llama.cpp's own time for the tokens it evaluated."""
    usage = usage or Usage()
    ns = 1_000_000
    stats = {
        "total_duration": int(total_ms * ns),
        "load_duration": int(load_ms * ns),
        "prompt_eval_count": usage.prompt_tokens,
        "prompt_eval_duration": int((usage.prompt_eval_ms or 0) * ns),
        "eval_count": usage.completion_tokens,
        "eval_duration": int((usage.eval_ms or 0) * ns),
    }
    if usage.cached_prompt_tokens is not None:
        stats["prompt_eval_cached_count"] = usage.cached_prompt_tokens
    return stats


def ollama_message(content: str, thinking: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking:
        message["thinking"] = thinking
    return message


def withhold_long_arrays(payload: dict[str, Any]) -> dict[str, Any]:
    """``/api/show`` without ``verbose``: Ollama answers every metadata array longer than 5 as ``[]``."""
    info = payload.get("model_info") or {}
    withheld = {k: [] if isinstance(v, list) and len(v) > SHOW_ARRAY_LIMIT else v for k, v in info.items()}
    return {**payload, "model_info": withheld}


def timed_load(state: ShimState, request: ChatRequest) -> float:
    started = time.perf_counter()
    state.backend.loaded(request.options.num_ctx)
    return (time.perf_counter() - started) * 1e3


def chat_once(state: ShimState, request: ChatRequest) -> dict[str, Any]:
    started = time.perf_counter()
    load_ms = timed_load(state, request)
    result = state.backend.chat(request)
    body = {
        "model": state.name,
        "created_at": now_iso(),
        "message": ollama_message(result.content, result.thinking),
        "done_reason": result.done_reason,
        "done": True,
        **ollama_stats(result.usage, (time.perf_counter() - started) * 1e3, load_ms),
    }
    if request.options.logprobs is not None:
        body["logprobs"] = wire_logprobs(result.logprobs)
    return body


def chat_ndjson(state: ShimState, request: ChatRequest) -> Iterator[bytes]:
    started = time.perf_counter()
    try:
        load_ms = timed_load(state, request)
        final: ChatChunk | None = None
        for chunk in state.backend.chat_stream(request):
            if chunk.done and chunk.usage is not None:
                final = chunk  # held back: the think normalizer may still append a flush chunk
            if chunk.content or chunk.thinking:
                line = {
                    "model": state.name,
                    "created_at": now_iso(),
                    "message": ollama_message(chunk.content, chunk.thinking),
                    "done": False,
                }
                yield (json.dumps(line) + "\n").encode()
        line = {
            "model": state.name,
            "created_at": now_iso(),
            "message": ollama_message("", ""),
            "done": True,
            "done_reason": final.done_reason if final else None,
            **ollama_stats(final.usage if final else None, (time.perf_counter() - started) * 1e3, load_ms),
        }
        yield (json.dumps(line) + "\n").encode()
    except Exception as exc:  # Ollama reports mid-stream failures as an error line
        log.exception("chat stream failed")
        yield (json.dumps({"error": str(exc)}) + "\n").encode()
