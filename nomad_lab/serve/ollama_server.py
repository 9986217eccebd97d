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

Run: ``python -m nomad_lab.serve.ollama_server --model smollm2-135m --port 11500`` or ``nomad-lab serve``.
"""

# No `from __future__ import annotations`: FastAPI must resolve the locally imported `Request`.
import argparse
import json
from typing import Any

from nomad_lab.backends.base import ChatRequest
from nomad_lab.backends.llama_models import DEFAULT_N_CTX, DEFAULT_THREADS, show_payload
from nomad_lab.serve.embed_routes import EmbedModel, add_embed_routes, v1_not_found
from nomad_lab.serve.ollama_bodies import chat_ndjson, chat_once, withhold_long_arrays
from nomad_lab.serve.openai_bodies import v1_format, v1_once, v1_sse
from nomad_lab.serve.state import ShimState, chat_options, now_iso, requested_top_logprobs

__all__ = ["VERSION", "add_arguments", "create_app", "main", "serve"]

VERSION = "0.0.0-nomad-lab"


def create_app(state: ShimState) -> Any:
    """The FastAPI app; imported lazily so the rest of nomad-lab never needs fastapi."""
    from fastapi import FastAPI, Request  # optional, heavy: the llm extra's server
    from fastapi.concurrency import run_in_threadpool  # optional, heavy: the llm extra's server
    from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse  # optional, heavy

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
        embed = [state.embed_model.tag_entry(now_iso())] if state.embed_model else []
        return {"models": [*embed, state.tag_entry()]}

    @app.get("/api/ps")
    def ps() -> dict[str, Any]:
        loaded = state.backend.loaded_now()
        if loaded is None:
            return {"models": []}
        entry = state.tag_entry()
        entry.update(expires_at=now_iso(), size_vram=0, context_length=loaded.n_ctx)
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
            return await run_in_threadpool(chat_once, state, chat_request)
        return StreamingResponse(chat_ndjson(state, chat_request), media_type="application/x-ndjson")

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
            return JSONResponse(v1_not_found(body), status_code=404)
        options = {
            "num_predict": body.get("max_completion_tokens") or body.get("max_tokens"),
            "temperature": body.get("temperature"),
            "top_p": body.get("top_p"),
            "seed": body.get("seed"),
        }
        logprobs = requested_top_logprobs(body.get("logprobs"), body.get("top_logprobs"))
        chat_request = ChatRequest(
            body.get("messages") or [],
            chat_options(options, format_=v1_format(body.get("response_format")), logprobs=logprobs),
            None,
            bool(body.get("stream")),
        )
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if not chat_request.stream:
            return await run_in_threadpool(v1_once, state, chat_request)
        return StreamingResponse(v1_sse(state, chat_request, include_usage), media_type="text/event-stream")

    if state.embed_model is not None:
        add_embed_routes(app, state.embed_model, body_of)
    return app


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``python -m nomad_lab.serve.ollama_server`` and ``nomad-lab serve``."""
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
    import uvicorn  # optional, heavy: the llm extra's server

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
        prog="python -m nomad_lab.serve.ollama_server", description=__doc__.splitlines()[0]
    )
    add_arguments(parser)
    return serve(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
