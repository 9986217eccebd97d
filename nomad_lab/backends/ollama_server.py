"""A protocol-faithful Ollama API server over llama-cpp-python with a real model.

Why it exists: no Ollama binary installs here (not from pip, not from apt), yet the native transport
must be tested against real behaviour: ``options.num_ctx`` has to change the real context (the model is
reloaded, as Ollama does, and a prompt longer than the window is truncated from the middle),
``format`` has to constrain real output, and ``prompt_eval_count`` has to be a real count. It answers
in Ollama's documented shapes: ``/api/version``, ``/api/tags``, ``/api/show``, ``/api/ps``,
``/api/chat`` (NDJSON streaming and not; ``logprobs``/``top_logprobs`` answered in Ollama's shape on
non-streamed calls, from the model's raw logits; a streamed call carries none), plus
``/v1/chat/completions`` and ``/v1/models`` (where, like Ollama's compat layer, ``num_ctx`` cannot be
sent). Every request body is recorded and served at ``GET /_nomad/requests`` so tests can assert
what arrived on the wire.

Run: ``python -m nomad_lab.backends.ollama_server --model smollm2-135m --port 11500`` or ``nomad-lab serve``.
"""

# No `from __future__ import annotations`: FastAPI must resolve the locally imported `Request`.
import argparse
import json
import logging
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Self

from nomad_lab.backends.base import ChatChunk, ChatOptions, ChatRequest, Usage
from nomad_lab.backends.embed_routes import EmbedModel, add_embed_routes
from nomad_lab.backends.embedded import DEFAULT_N_CTX, DEFAULT_THREADS, EmbeddedBackend, show_payload
from nomad_lab.core.confidence import TokenChoice

log = logging.getLogger(__name__)

VERSION = "0.0.0-nomad-lab"
SHOW_ARRAY_LIMIT = 5
"""Ollama withholds longer metadata arrays from ``/api/show`` unless the request says ``verbose``."""
OPTION_NAMES = ("num_ctx", "num_predict", "temperature", "seed", "top_p", "top_k", "min_p", "repeat_penalty")


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class ShimState:
    """The one model this server serves, and the log of every request body it received."""

    def __init__(
        self,
        model: str,
        *,
        name: str | None = None,
        num_ctx: int = DEFAULT_N_CTX,
        threads: int = DEFAULT_THREADS,
        embed_model: EmbedModel | None = None,
    ) -> None:
        self.backend = EmbeddedBackend(model, n_ctx=num_ctx, threads=threads)
        base = name or self.backend.name
        self.name = base if ":" in base else f"{base}:latest"
        self.embed_model = embed_model
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def record(self, path: str, body: Any) -> None:
        with self._lock:
            self.requests.append({"path": path, "body": body, "at": time.time()})

    def serves(self, model: str | None) -> bool:
        """Ollama resolves a bare name to ``:latest``; accept both, and the embedded alias."""
        if not model:
            return False
        return model in (self.name, self.name.removesuffix(":latest"), self.backend.model)

    def details(self) -> dict[str, Any]:
        return show_payload(self.backend.loaded())["details"]

    def tag_entry(self) -> dict[str, Any]:
        size = self.backend.path.stat().st_size
        return {
            "name": self.name,
            "model": self.name,
            "modified_at": _now(),
            "size": size,
            "digest": uuid.uuid5(uuid.NAMESPACE_URL, str(self.backend.path)).hex,
            "details": self.details(),
        }


def chat_options(
    options: dict[str, Any] | None,
    *,
    format_: Any = None,
    keep_alive: Any = None,
    think: Any = None,
    logprobs: int | None = None,
) -> ChatOptions:
    """Ollama request options → our ``ChatOptions`` (unknown options are ignored, as Ollama does)."""
    known = {k: v for k, v in (options or {}).items() if k in OPTION_NAMES and v is not None}
    return ChatOptions(**known, format=format_ or None, keep_alive=keep_alive, think=think, logprobs=logprobs)


def requested_top_logprobs(wants: Any, top: Any) -> int | None:
    """Ollama's ``logprobs``/``top_logprobs`` (and OpenAI's, the same names): None unless asked; the
    count is clamped to the documented 0–20."""
    if wants is not True:
        return None
    return min(max(top, 0), 20) if isinstance(top, int) and not isinstance(top, bool) else 0


def wire_logprobs(choices: tuple[TokenChoice, ...] | None) -> list[dict[str, Any]]:
    """Token log-probabilities in Ollama's documented shape (OpenAI's ``logprobs.content`` is the same)."""

    def entry(token: str, logprob: float) -> dict[str, Any]:
        return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}

    return [
        {**entry(c.token, c.logprob), "top_logprobs": [entry(t, lp) for t, lp in c.top]}
        for c in choices or ()
    ]


def _stats(usage: Usage | None, total_ms: float, load_ms: float) -> dict[str, Any]:
    usage = usage or Usage()
    ns = 1_000_000
    return {
        "total_duration": int(total_ms * ns),
        "load_duration": int(load_ms * ns),
        "prompt_eval_count": usage.prompt_tokens,
        "prompt_eval_duration": int((usage.prompt_eval_ms or 0) * ns),
        "eval_count": usage.completion_tokens,
        "eval_duration": int((usage.eval_ms or 0) * ns),
    }


def _message(content: str, thinking: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking:
        message["thinking"] = thinking
    return message


def withhold_long_arrays(payload: dict[str, Any]) -> dict[str, Any]:
    """``/api/show`` without ``verbose``: Ollama answers every metadata array longer than 5 as ``[]``."""
    info = payload.get("model_info") or {}
    withheld = {k: [] if isinstance(v, list) and len(v) > SHOW_ARRAY_LIMIT else v for k, v in info.items()}
    return {**payload, "model_info": withheld}


def create_app(state: ShimState) -> Any:
    """The FastAPI app; imported lazily so the rest of nomad-lab never needs fastapi."""
    from fastapi import FastAPI, Request
    from fastapi.concurrency import run_in_threadpool
    from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse

    app = FastAPI(title="nomad-lab Ollama shim", version=VERSION)

    def not_found(model: Any) -> JSONResponse:
        return JSONResponse({"error": f"model '{model}' not found"}, status_code=404)

    async def body_of(request: Request) -> Any:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = raw.decode("utf-8", "replace")
        state.record(request.url.path, body)
        return body

    @app.get("/")
    def root() -> PlainTextResponse:
        return PlainTextResponse("Ollama is running")

    @app.get("/api/version")
    def version() -> dict[str, str]:
        return {"version": VERSION}

    @app.get("/api/tags")
    def tags() -> dict[str, Any]:
        embed = [state.embed_model.tag_entry(_now())] if state.embed_model else []
        return {"models": [*embed, state.tag_entry()]}

    @app.get("/api/ps")
    def ps() -> dict[str, Any]:
        loaded = state.backend.loaded_now()
        if loaded is None:
            return {"models": []}
        entry = state.tag_entry()
        entry.update(expires_at=_now(), size_vram=0, context_length=loaded.n_ctx)
        return {"models": [entry]}

    @app.post("/api/show")
    async def show(request: Request) -> Any:
        body = await body_of(request)
        model = (body.get("model") or body.get("name")) if isinstance(body, dict) else None
        if not state.serves(model):
            return not_found(model)
        payload = await run_in_threadpool(lambda: show_payload(state.backend.loaded()))
        return (
            payload
            if isinstance(body, dict) and body.get("verbose") is True
            else withhold_long_arrays(payload)
        )

    @app.get("/_nomad/requests")
    def recorded() -> list[dict[str, Any]]:
        return state.requests

    @app.delete("/_nomad/requests")
    def clear() -> dict[str, int]:
        cleared = len(state.requests)
        state.requests.clear()
        return {"cleared": cleared}

    @app.post("/api/chat")
    async def chat(request: Request) -> Any:
        body = await body_of(request)
        if not isinstance(body, dict):
            return JSONResponse({"error": "invalid JSON body"}, status_code=400)
        if not state.serves(body.get("model")):  # also an embedding model: Ollama says not found too
            return not_found(body.get("model"))
        if body.get("think") not in (None, False):
            return JSONResponse({"error": f'"{state.name}" does not support thinking'}, status_code=400)
        opts = chat_options(
            body.get("options"),
            format_=body.get("format"),
            keep_alive=body.get("keep_alive"),
            think=body.get("think"),
            logprobs=requested_top_logprobs(body.get("logprobs"), body.get("top_logprobs")),
        )
        chat_request = ChatRequest(body.get("messages") or [], opts, None, bool(body.get("stream", True)))
        if not chat_request.stream:
            return await run_in_threadpool(_chat_once, state, chat_request)
        return StreamingResponse(_chat_ndjson(state, chat_request), media_type="application/x-ndjson")

    @app.get("/v1/models")
    def v1_models() -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": state.name, "object": "model", "created": 0, "owned_by": "library"}],
        }

    @app.post("/v1/chat/completions")
    async def v1_chat(request: Request) -> Any:
        body = await body_of(request)
        if not isinstance(body, dict) or not state.serves(body.get("model")):
            model = body.get("model") if isinstance(body, dict) else None
            return JSONResponse(
                {"error": {"message": f"model '{model}' not found", "type": "api_error"}}, status_code=404
            )
        options = {
            "num_predict": body.get("max_completion_tokens") or body.get("max_tokens"),
            "temperature": body.get("temperature"),
            "top_p": body.get("top_p"),
            "seed": body.get("seed"),
        }
        logprobs = requested_top_logprobs(body.get("logprobs"), body.get("top_logprobs"))
        chat_request = ChatRequest(
            body.get("messages") or [],
            chat_options(options, format_=_v1_format(body.get("response_format")), logprobs=logprobs),
            None,
            bool(body.get("stream")),
        )
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if not chat_request.stream:
            return await run_in_threadpool(_v1_once, state, chat_request)
        return StreamingResponse(_v1_sse(state, chat_request, include_usage), media_type="text/event-stream")

    if state.embed_model is not None:
        add_embed_routes(app, state.embed_model, body_of)
    return app


# ------------------------------------------------------------------------------- /api/chat bodies


def _timed_load(state: ShimState, request: ChatRequest) -> float:
    started = time.perf_counter()
    state.backend.loaded(request.options.num_ctx)
    return (time.perf_counter() - started) * 1e3


def _chat_once(state: ShimState, request: ChatRequest) -> dict[str, Any]:
    started = time.perf_counter()
    load_ms = _timed_load(state, request)
    result = state.backend.chat(request)
    body = {
        "model": state.name,
        "created_at": _now(),
        "message": _message(result.content, result.thinking),
        "done_reason": result.done_reason,
        "done": True,
        **_stats(result.usage, (time.perf_counter() - started) * 1e3, load_ms),
    }
    if request.options.logprobs is not None:
        body["logprobs"] = wire_logprobs(result.logprobs)
    return body


def _chat_ndjson(state: ShimState, request: ChatRequest) -> Iterator[bytes]:
    started = time.perf_counter()
    try:
        load_ms = _timed_load(state, request)
        final: ChatChunk | None = None
        for chunk in state.backend.chat_stream(request):
            if chunk.done and chunk.usage is not None:
                final = chunk  # held back: the think normalizer may still append a flush chunk
            if chunk.content or chunk.thinking:
                line = {
                    "model": state.name,
                    "created_at": _now(),
                    "message": _message(chunk.content, chunk.thinking),
                    "done": False,
                }
                yield (json.dumps(line) + "\n").encode()
        line = {
            "model": state.name,
            "created_at": _now(),
            "message": _message("", ""),
            "done": True,
            "done_reason": final.done_reason if final else None,
            **_stats(final.usage if final else None, (time.perf_counter() - started) * 1e3, load_ms),
        }
        yield (json.dumps(line) + "\n").encode()
    except Exception as exc:  # Ollama reports mid-stream failures as an error line
        log.exception("chat stream failed")
        yield (json.dumps({"error": str(exc)}) + "\n").encode()


# ---------------------------------------------------------------------------- /v1 (OpenAI) bodies


def _v1_format(response_format: Any) -> Any:
    """OpenAI ``response_format`` → Ollama ``format``; both the json_object+schema and json_schema forms."""
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_schema":
        return (response_format.get("json_schema") or {}).get("schema") or "json"
    if response_format.get("type") == "json_object":
        return response_format.get("schema") or "json"
    return None


def _v1_usage(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None or usage.prompt_tokens is None:
        return None
    completion = usage.completion_tokens or 0
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": usage.prompt_tokens + completion,
    }


def _v1_once(state: ShimState, request: ChatRequest) -> dict[str, Any]:
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
        "usage": _v1_usage(result.usage),
    }


def _v1_sse(state: ShimState, request: ChatRequest, include_usage: bool) -> Iterator[bytes]:
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
            yield event([], _v1_usage(final.usage if final else None))
    except Exception as exc:
        log.exception("v1 stream failed")
        yield f"data: {json.dumps({'error': {'message': str(exc)}})}\n\n".encode()
    yield b"data: [DONE]\n\n"


# ------------------------------------------------------------------------------------------ running


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """A model server subprocess that is answering on enter and gone (waited for) on exit.

    Used by the tests and usable from notebooks. llama.cpp servers take seconds to exit after SIGTERM,
    so exit waits for the process instead of assuming it is gone; the port is not reused at once.
    """

    def __init__(
        self, argv: list[str], *, host: str, port: int, ready_path: str = "/", ready_timeout: float = 90.0
    ) -> None:
        self.argv, self.host, self.port = argv, host, port
        self.ready_path, self.ready_timeout = ready_path, ready_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - lives until __exit__

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def log_tail(self, limit: int = 4000) -> str:
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-limit:]

    def __enter__(self) -> Self:
        import httpx

        self.process = subprocess.Popen(self.argv, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(self.base_url + self.ready_path, timeout=2).status_code < 500:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"server not ready after {self.ready_timeout}s:\n{self.log_tail()}")

    def stop(self, grace: float = 20.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=grace)

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._log.close()


def shim_command(
    model: str, port: int, *, host: str = "127.0.0.1", num_ctx: int = DEFAULT_N_CTX, name: str | None = None
) -> list[str]:
    """argv that runs this server with the current interpreter."""
    argv = [
        sys.executable,
        "-m",
        "nomad_lab.backends.ollama_server",
        "--model",
        model,
        "--host",
        host,
        "--port",
        str(port),
        "--num-ctx",
        str(num_ctx),
        "--preload",
    ]
    return argv + (["--name", name] if name else [])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``python -m nomad_lab.backends.ollama_server`` and ``nomad-lab serve``."""
    parser.add_argument(
        "--model",
        default="gemma3-270m",
        type=lambda text: text.removeprefix("embedded:"),  # the README's `--model embedded:gemma3-270m`
        help="gemma3-270m, smollm2-135m or a path to a .gguf file, with or without embedded: "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--name", default=None, help="model name to advertise (default: derived from --model)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=11434, help="port to listen on (default: %(default)s)")
    parser.add_argument(
        "--num-ctx",
        type=int,
        default=DEFAULT_N_CTX,
        help="context when a request sends no num_ctx, like OLLAMA_CONTEXT_LENGTH (default: %(default)s)",
    )
    parser.add_argument(
        "--threads", type=int, default=DEFAULT_THREADS, help="llama.cpp threads (default: %(default)s)"
    )
    parser.add_argument("--preload", action="store_true", help="load the model before accepting requests")
    parser.add_argument("--log-level", default="warning", help="uvicorn log level (default: %(default)s)")


def serve(args: argparse.Namespace, embed_model: EmbedModel | None = None) -> int:
    """Run until stopped; ``embed_model`` (built by ``nomad-lab serve --embed``) adds the embedding routes."""
    import uvicorn

    state = ShimState(
        args.model, name=args.name, num_ctx=args.num_ctx, threads=args.threads, embed_model=embed_model
    )
    if args.preload:
        state.backend.loaded()
    also = f" and embeddings from {embed_model.name}" if embed_model else ""
    print(f"nomad-lab Ollama shim: {state.name}{also} on http://{args.host}:{args.port}", flush=True)
    uvicorn.run(create_app(state), host=args.host, port=args.port, log_level=args.log_level)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nomad_lab.backends.ollama_server", description=__doc__.splitlines()[0]
    )
    add_arguments(parser)
    return serve(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
