"""Native Ollama transport through the official ``ollama`` package (SPEC §7.1, §7.2, §7.4).

Why native: only ``/api/chat`` carries ``options.num_ctx``; the OpenAI-compatible ``/v1`` path drops it
and the model silently runs at the server default (the seed processed 2,060 tokens of a 7,049-token
prompt that way). ``format`` and ``think`` are top-level fields beside ``options``, ``keep_alive`` is
sent only when set, and every library or HTTP failure becomes a ``BackendError`` with a short reason.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import ollama
import pydantic

from nomad_lab.backends.base import BackendError as BackendError  # re-export for callers catching it here
from nomad_lab.backends.base import (
    ChatChunk,
    ChatRequest,
    ChatResult,
    ModelEntry,
    ModelInfo,
    Usage,
    model_info_from_show,
    normalize_result,
    normalize_stream,
    resolve_model,
)
from nomad_lab.core.kv_layers import withheld_arrays
from nomad_lab.core.verdict_confidence import choices_from_wire

DETECT_TIMEOUT_S = 5.0
SHOW_TIMEOUT_S = 5.0


def backend_error(exc: BaseException) -> BackendError:
    """Map an ``ollama``/``httpx`` exception to a ``BackendError`` with a stable reason label."""
    if isinstance(exc, BackendError):
        return exc
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return BackendError("timeout", str(exc) or type(exc).__name__)
    if isinstance(exc, ollama.ResponseError):
        if exc.status_code == 404:
            return BackendError("model-not-found", exc.error, 404)
        if exc.status_code and exc.status_code > 0:
            return BackendError(f"http-{exc.status_code}", exc.error, exc.status_code)
        return BackendError("server-error", exc.error)  # an {"error": ...} line mid-stream
    if isinstance(exc, ConnectionError | httpx.ConnectError):
        # ollama replaces httpx.ConnectError with a generic ConnectionError (``from None``); the
        # original stays in ``__context__`` and says whether the port was closed.
        cause = exc.__context__ if exc.__context__ is not None else exc
        refused = isinstance(exc, ConnectionRefusedError) or "refused" in str(cause).lower()
        return BackendError("connection-refused" if refused else "connection-error", str(cause))
    # ValueError covers JSONDecodeError, pydantic's ValidationError and an integer literal too long to
    # parse; TypeError a body of the wrong JSON type (a list where ShowResponse wants an object).
    if isinstance(exc, ValueError | TypeError | pydantic.ValidationError | httpx.DecodingError | KeyError):
        return BackendError("bad-response", f"{type(exc).__name__}: {exc}"[:300])
    if isinstance(exc, httpx.HTTPError):
        return BackendError("connection-error", f"{type(exc).__name__}: {exc}")
    return BackendError("error", f"{type(exc).__name__}: {exc}")


def _usage(part: Any, cached: int | None = None) -> Usage:
    """Ollama's counts. Current Ollama counts cached prompt tokens in ``prompt_eval_count``; older
    versions omitted the field on a fully cached prompt, which the source label records. ``cached`` is
    ``prompt_eval_cached_count`` where the server sends it (newer Ollama, ``nomad-lab serve``): the
    prompt tokens read from the KV cache, which the ``ollama`` client's model drops."""
    prompt = part.prompt_eval_count
    duration = part.prompt_eval_duration
    eval_duration = part.eval_duration
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=part.eval_count,
        prompt_eval_ms=duration / 1e6 if duration is not None else None,
        eval_ms=eval_duration / 1e6 if eval_duration is not None else None,
        source="ollama:prompt_eval_count" if prompt is not None else "ollama:missing-prompt_eval_count",
        cached_prompt_tokens=cached,
    )


def probe_native(base_url: str, timeout: float = DETECT_TIMEOUT_S) -> bool | None:
    """SPEC §7.1: True iff ``GET /api/tags`` answers JSON with a ``models`` array.

    None means no HTTP answer at all (refused, timeout): the caller must not memoize that and should
    re-probe next time. Any HTTP answer without ``models[]`` is a definite False.
    """
    try:
        response = httpx.get(f"{base_url.rstrip('/')}/api/tags", timeout=timeout)
    except httpx.HTTPError:
        return None
    if not response.is_success:
        return False
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and isinstance(body.get("models"), list)


class BackendDetector:
    """Memoized §7.1 detection per base URL: definite answers are kept, no-answer is re-probed."""

    def __init__(self, timeout: float = DETECT_TIMEOUT_S) -> None:
        self.timeout = timeout
        self._memo: dict[str, bool] = {}

    def is_native(self, base_url: str) -> bool:
        key = base_url.rstrip("/")
        if key in self._memo:
            return self._memo[key]
        found = probe_native(key, self.timeout)
        if found is None:
            return False
        self._memo[key] = found
        return found


class OllamaBackend:
    """``/api/chat``, ``/api/show``, ``/api/tags`` of an Ollama server (or the nomad-lab shim)."""

    kind = "ollama"

    def __init__(
        self, base_url: str, model: str | None = None, *, timeout: float | None = None, **client_kwargs: Any
    ) -> None:
        """``client_kwargs`` go to ``ollama.Client`` (so to httpx), e.g. ``event_hooks`` to see the wire."""
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.client = ollama.Client(host=self.base_url, timeout=timeout, **client_kwargs)
        show_timeout = min(timeout, SHOW_TIMEOUT_S) if timeout else SHOW_TIMEOUT_S
        self._show_client = ollama.Client(host=self.base_url, timeout=show_timeout, **client_kwargs)
        self._show_timeout = show_timeout
        self._show_memo: dict[str, ModelInfo] = {}

    def _body(self, request: ChatRequest, stream: bool) -> dict[str, Any]:
        opts = request.options
        body: dict[str, Any] = {
            "model": resolve_model(self, request.model),
            "messages": [dict(m) for m in request.messages],
            "stream": stream,
            "options": opts.samplers() or None,
        }
        if opts.think is not None:
            body["think"] = opts.think  # sent whenever defined, including False (SPEC §7.2)
        if opts.keep_alive is not None:
            body["keep_alive"] = opts.keep_alive
        if opts.format is not None:
            body["format"] = opts.format
        if opts.logprobs is not None:
            body["logprobs"] = True
            body["top_logprobs"] = opts.logprobs
        return body

    def _chat_raw(self, body: dict[str, Any]) -> tuple[ollama.ChatResponse, Any, int | None]:
        """The raw ``/api/chat`` answer, its ``logprobs`` and ``prompt_eval_cached_count`` read apart:
        the client's strict model would turn one malformed number into a failed call (the verdict must
        stand without them), and it drops the cached count."""
        wire = {k: v for k, v in body.items() if v is not None}
        data = self.client._request_raw("POST", "/api/chat", json=wire).json()
        if not isinstance(data, dict):
            raise BackendError("bad-response", f"/api/chat answered {str(data)[:200]!r}")
        raw_logprobs = data.pop("logprobs", None)
        cached = data.pop("prompt_eval_cached_count", None)
        return (
            ollama.ChatResponse.model_validate(data),
            raw_logprobs,
            cached if isinstance(cached, int) else None,
        )

    def chat(self, request: ChatRequest) -> ChatResult:
        started = time.perf_counter()
        body = self._body(request, stream=False)
        logprobs = None
        try:
            response, raw_logprobs, cached = self._chat_raw(body)
            if request.options.logprobs is not None:
                logprobs = choices_from_wire(raw_logprobs)
            message = response.message
            usage = _usage(response, cached)
        except Exception as exc:
            raise backend_error(exc) from exc
        return normalize_result(
            message.content or "",
            message.thinking,
            usage=usage,
            done_reason=response.done_reason,
            structured=request.options.format is not None,
            ms=(time.perf_counter() - started) * 1e3,
            model=body["model"],
            logprobs=logprobs,
        )

    def chat_stream(self, request: ChatRequest) -> Iterator[ChatChunk]:
        return normalize_stream(self._raw_stream(request))

    def _raw_stream(self, request: ChatRequest) -> Iterator[ChatChunk]:
        body = self._body(request, stream=True)
        structured = request.options.format is not None
        try:
            for part in self.client.chat(**body):
                message = part.message
                if part.done:
                    yield ChatChunk(
                        message.content or "",
                        message.thinking or "",
                        True,
                        part.done_reason,
                        _usage(part),
                        structured,
                    )
                else:
                    yield ChatChunk(message.content or "", message.thinking or "", structured=structured)
        except Exception as exc:
            raise backend_error(exc) from exc

    def show(self, model: str | None = None) -> ModelInfo:
        """``/api/show`` parsed per SPEC §7.4, memoized per model on success only."""
        name = resolve_model(self, model)
        if name in self._show_memo:
            return self._show_memo[name]
        try:
            payload = self._show_client.show(name).model_dump(by_alias=True, mode="json")
            if withheld_arrays(payload.get("modelinfo") or payload.get("model_info")):
                payload = self._verbose_show(name)
        except Exception as exc:
            raise backend_error(exc) from exc
        size = next((m.size_bytes for m in self._safe_list() if m.name == name), None)
        try:
            info = model_info_from_show(name, payload, size)
        except (ValueError, TypeError, AttributeError) as exc:  # well-formed JSON, absurd content
            raise BackendError("bad-response", f"/api/show: {type(exc).__name__}: {exc}"[:300]) from exc
        self._show_memo[name] = info
        return info

    def _verbose_show(self, name: str) -> dict[str, Any]:
        """``/api/show`` with ``verbose: true``, which the ``ollama`` client cannot send: a hybrid model's
        per-layer KV arrays come back as ``[]`` without it (as the reference asks again)."""
        response = httpx.post(
            f"{self.base_url}/api/show", json={"model": name, "verbose": True}, timeout=self._show_timeout
        )
        response.raise_for_status()
        payload = response.json()
        if not isinstance(payload, dict):
            raise ValueError("verbose /api/show did not answer a JSON object")
        return payload

    def _safe_list(self) -> list[ModelEntry]:
        try:
            return self.list_models()
        except BackendError:
            return []

    def list_models(self) -> list[ModelEntry]:
        try:
            listing = self.client.list()
        except Exception as exc:
            raise backend_error(exc) from exc
        entries = []
        for m in listing.models:
            details = m.details
            entries.append(
                ModelEntry(
                    name=m.model or "",
                    size_bytes=int(m.size) if m.size is not None else None,
                    parameter_size=details.parameter_size if details else None,
                    quantization=details.quantization_level if details else None,
                )
            )
        return entries
