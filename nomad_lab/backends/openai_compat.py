"""OpenAI-compatible transport (LM Studio, llama.cpp servers, Ollama's ``/v1``) via the ``openai`` package.

What this path cannot do, and says so (SPEC §7.3): it never carries ``num_ctx`` (Ollama's compat layer
drops it, so the model runs at the server default), nor ``top_k``/``min_p``/``repeat_penalty``.
``max_tokens`` carries ``num_predict``.

Two fixes over the seed, each an explicit option so both behaviours can be measured:
- ``format``: the seed never sent it on this path (``format_mode="none"``, spec ``openai+noformat://``).
  Otherwise a JSON schema goes out as ``response_format``, in the form the server enforces:
  llama-cpp-python's server honours only ``{"type": "json_object", "schema": …}`` and answers the
  OpenAI ``json_schema`` form with HTTP 500, so ``auto`` probes for that server once and picks the form.
  ``structured`` is True only when a response format was sent and accepted.
- usage: when streaming, ``stream_options.include_usage`` is requested; llama-cpp-python's server
  ignores it and never streams usage, so a stream that ends without usage has its prompt count
  recovered by a one-token non-streamed request of the same messages (exact, and cheap because the
  server reuses the cached prompt prefix). ``Usage.source`` records which way the count came.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
from openai.types.chat import ChatCompletion

from nomad_lab.backends.base import (
    BackendError,
    ChatChunk,
    ChatRequest,
    ChatResult,
    ModelEntry,
    ModelInfo,
    Usage,
    normalize_result,
    normalize_stream,
    resolve_model,
)
from nomad_lab.core.verdict_confidence import TokenChoice, choices_from_wire

API_KEY = "nomad"
PROBE_TIMEOUT_S = 5.0


def backend_error(exc: BaseException) -> BackendError:
    """Map an ``openai`` exception to a ``BackendError`` with a stable reason label."""
    if isinstance(exc, BackendError):
        return exc
    if isinstance(exc, openai.APITimeoutError):
        return BackendError("timeout", str(exc))
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        refused = isinstance(cause, ConnectionRefusedError) or "refused" in repr(cause).lower()
        return BackendError("connection-refused" if refused else "connection-error", repr(cause or exc))
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code == 404:
            return BackendError("model-not-found", str(exc), 404)
        return BackendError(f"http-{exc.status_code}", str(exc)[:300], exc.status_code)
    if isinstance(exc, openai.APIResponseValidationError | ValueError | KeyError | AttributeError):
        return BackendError("bad-response", f"{type(exc).__name__}: {exc}"[:300])
    return BackendError("error", f"{type(exc).__name__}: {exc}")


def _extra(obj: Any, *names: str) -> str:
    """First non-empty of the named (possibly non-standard) fields: servers name thinking differently."""
    for name in names:
        value = getattr(obj, name, None)
        if value:
            return str(value)
    return ""


THINKING_FIELDS = ("thinking", "reasoning", "reasoning_content")  # the seed reads the first two


def response_format_for(format_: dict[str, Any] | str, mode: str) -> dict[str, Any]:
    """The ``response_format`` a server of this ``mode`` enforces for a JSON-schema dict or ``"json"``."""
    if format_ == "json":
        return {"type": "json_object"}
    if mode == "json_object":
        return {"type": "json_object", "schema": format_}
    return {"type": "json_schema", "json_schema": {"name": "response", "schema": format_, "strict": True}}


class OpenAICompatBackend:
    """``/v1/chat/completions`` and ``/v1/models`` of any OpenAI-compatible server."""

    kind = "openai"

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        *,
        format_mode: str = "auto",
        timeout: float | None = None,
        max_retries: int = 0,
        **client_kwargs: Any,
    ) -> None:
        """``client_kwargs`` go to ``openai.OpenAI``, e.g. an ``http_client`` with hooks to capture the wire.
        Retries default to 0 so a failure costs one request and is reported as it happened."""
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.format_mode = format_mode
        self.timeout = timeout
        self.client = openai.OpenAI(
            base_url=self.base_url, api_key=API_KEY, timeout=timeout, max_retries=max_retries, **client_kwargs
        )
        self._llama_cpp_python: bool | None = None

    # -- server quirks

    @property
    def server_root(self) -> str:
        return self.base_url.removesuffix("/v1")

    def is_llama_cpp_python(self) -> bool:
        """True if the server is llama-cpp-python's (it alone has ``/extras/tokenize/count``)."""
        if self._llama_cpp_python is None:
            try:
                response = httpx.post(
                    f"{self.server_root}/extras/tokenize/count", json={"input": "x"}, timeout=PROBE_TIMEOUT_S
                )
                self._llama_cpp_python = response.is_success and "count" in response.json()
            except (httpx.HTTPError, ValueError):
                return False  # no answer: decide again next time
        return self._llama_cpp_python

    def effective_format_mode(self) -> str:
        if self.format_mode != "auto":
            return self.format_mode
        return "json_object" if self.is_llama_cpp_python() else "json_schema"

    # -- chat

    def _params(self, request: ChatRequest, stream: bool) -> tuple[dict[str, Any], bool]:
        opts = request.options
        params: dict[str, Any] = {
            "model": resolve_model(self, request.model),
            "messages": [dict(m) for m in request.messages],
            "stream": stream,
        }
        for ours, theirs in (
            ("num_predict", "max_tokens"),
            ("temperature", "temperature"),
            ("top_p", "top_p"),
            ("seed", "seed"),
        ):
            if getattr(opts, ours) is not None:
                params[theirs] = getattr(opts, ours)
        if opts.think == "medium":
            params["reasoning_effort"] = "medium"
        elif opts.think is False and opts.thinking_capable:
            params["reasoning_effort"] = "none"
        if opts.think:
            params["extra_body"] = {"think": opts.think}  # ignored by /v1, sent as the seed does
        structured = False
        if opts.format is not None and (mode := self.effective_format_mode()) != "none":
            params["response_format"] = response_format_for(opts.format, mode)
            structured = True
        if stream:
            params["stream_options"] = {"include_usage": True}
        elif opts.logprobs is not None:
            params["logprobs"] = True
            params["top_logprobs"] = opts.logprobs
        return params, structured

    def chat(self, request: ChatRequest) -> ChatResult:
        started = time.perf_counter()
        params, structured = self._params(request, stream=False)
        try:
            response = self.client.chat.completions.create(**params)
            if not isinstance(response, ChatCompletion):
                raise BackendError("bad-response", f"not a chat completion: {str(response)[:200]!r}")
            choice = response.choices[0]
            usage = self._usage(response.usage, "openai:usage", (response.model_extra or {}).get("timings"))
            logprobs = self._logprobs(choice) if "logprobs" in params else None
        except Exception as exc:
            raise backend_error(exc) from exc
        return normalize_result(
            choice.message.content or "",
            _extra(choice.message, *THINKING_FIELDS),
            usage=usage,
            done_reason=choice.finish_reason,
            structured=structured,
            ms=(time.perf_counter() - started) * 1e3,
            model=params["model"],
            logprobs=logprobs,
        )

    @staticmethod
    def _logprobs(choice: Any) -> tuple[TokenChoice, ...] | None:
        """``choice.logprobs.content`` as sent (the client does not validate it), read without raising."""
        raw = getattr(choice, "logprobs", None)
        if raw is None:
            return None
        dumped = raw.model_dump(warnings=False) if hasattr(raw, "model_dump") else raw
        return choices_from_wire(dumped.get("content") if isinstance(dumped, dict) else dumped)

    @staticmethod
    def _usage(usage: Any, source: str, timings: Any = None) -> Usage:
        """``usage``, its ``prompt_tokens_details.cached_tokens`` where sent, and llama.cpp server's
        ``timings`` (``prompt_ms`` for the newly evaluated prompt, ``cache_n`` tokens from the cache)."""
        if usage is None:
            return Usage(source="openai:no-usage")
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None)
        prompt_ms = None
        if isinstance(timings, dict):
            prompt_ms = timings.get("prompt_ms")
            cached = timings.get("cache_n", cached)
            source += ";timings"
        return Usage(
            usage.prompt_tokens, usage.completion_tokens, prompt_ms, None, source, cached_prompt_tokens=cached
        )

    def chat_stream(self, request: ChatRequest) -> Iterator[ChatChunk]:
        return normalize_stream(self._raw_stream(request))

    def _raw_stream(self, request: ChatRequest) -> Iterator[ChatChunk]:
        params, structured = self._params(request, stream=True)
        usage: Usage | None = None
        finish: str | None = None
        pieces = 0
        try:
            for chunk in self.client.chat.completions.create(**params):
                if chunk.usage is not None:
                    usage = self._usage(chunk.usage, "openai:stream-usage")
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish = choice.finish_reason or finish
                delta = choice.delta
                content, thinking = delta.content or "", _extra(delta, *THINKING_FIELDS)
                if content or thinking:
                    pieces += 1
                    yield ChatChunk(content, thinking, structured=structured)
        except Exception as exc:
            raise backend_error(exc) from exc
        if usage is None:
            usage = self._recover_usage(request, pieces)
        yield ChatChunk(done=True, done_reason=finish, usage=usage, structured=structured)

    def _recover_usage(self, request: ChatRequest, pieces: int) -> Usage:
        """The prompt count of a stream that carried no usage, from a one-token non-streamed call.

        The completion count is then the number of streamed content deltas (llama.cpp servers send
        one per token); the source label says both.
        """
        params, _ = self._params(request, stream=False)
        params.pop("response_format", None)
        params["max_tokens"] = 1
        try:
            response = self.client.chat.completions.create(**params)
            prompt = (
                response.usage.prompt_tokens
                if isinstance(response, ChatCompletion) and response.usage
                else None
            )
        except Exception:  # recovery is best effort; the stream itself succeeded
            prompt = None
        if prompt is None:
            return Usage(None, pieces, None, None, "openai:stream-without-usage")
        return Usage(
            prompt,
            pieces,
            None,
            None,
            "openai:stream-without-usage;prompt=non-stream-recount;completion=streamed-deltas",
        )

    # -- models

    def list_models(self) -> list[ModelEntry]:
        try:
            return [ModelEntry(m.id) for m in self.client.models.list()]
        except Exception as exc:
            raise backend_error(exc) from exc

    def show(self, model: str | None = None) -> ModelInfo:
        """What ``/v1`` can say about a model: its name only. The context resolver then falls back to
        the user cap or 8192, exactly as the seed does for a non-Ollama backend (SPEC §4.4)."""
        return ModelInfo(name=resolve_model(self, model))
