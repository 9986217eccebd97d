"""``/api/embed``, ``/api/embeddings`` and ``/v1/embeddings`` for the Ollama shim, over a real local embedder.

Why: the ``ollama://`` and ``openai://`` embedder specs must be tested against real HTTP with real vectors,
and no Ollama installs here. The shapes follow Ollama's API docs (``/api/embed``: ``input`` a string or a
list, answer ``embeddings`` plus durations and ``prompt_eval_count``; the legacy ``/api/embeddings``:
``prompt`` in, ``embedding`` out) and OpenAI's (``data[i].embedding`` with ``index``, ``usage``,
``encoding_format`` float or base64). ``prompt_eval_count`` and ``usage`` count whitespace-separated words,
not model tokens: the embedder's tokenizer is not visible through this interface.
The embedder comes in as any object with ``embed(texts)`` (this ring
cannot import the retrieval ring); it embeds the texts as sent: prefixes are the client's business, as in
Ollama.
"""

import base64
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["EmbedModel", "add_embed_routes"]


class EmbedModel:
    """The embedding model a shim serves: an advertised ``name`` and a function from texts to vectors."""

    def __init__(self, name: str, embed: Callable[[Sequence[str]], np.ndarray], key: str) -> None:
        self.name = name if ":" in name else f"{name}:latest"
        self.embed = embed
        self.digest = uuid.uuid5(uuid.NAMESPACE_URL, key).hex

    def serves(self, model: object) -> bool:
        return isinstance(model, str) and model in (self.name, self.name.removesuffix(":latest"))

    def tag_entry(self, now: str) -> dict[str, Any]:
        details = {"format": "nomad-lab", "family": "embedding", "families": ["embedding"]}
        return {"name": self.name, "model": self.name, "modified_at": now, "size": 0,
                "digest": self.digest, "details": details}  # fmt: skip


def _texts(value: object) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _timed(model: EmbedModel, texts: list[str]) -> tuple[list[list[float]], int]:
    started = time.perf_counter_ns()
    vectors = model.embed(texts) if texts else np.zeros((0, 0))
    return [list(map(float, v)) for v in vectors], time.perf_counter_ns() - started


def _v1_item(index: int, vector: list[float], encoding: str) -> dict[str, Any]:
    data: Any = vector
    if encoding == "base64":
        data = base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")
    return {"object": "embedding", "embedding": data, "index": index}


def v1_not_found(body: Any) -> dict[str, Any]:
    """OpenAI's 404 body for a request naming a model the shim does not serve. Here, not with the chat
    bodies, because both ``/v1`` routes give it and the chat side already imports this module."""
    wanted = body.get("model") if isinstance(body, dict) else None
    return {"error": {"message": f"model '{wanted}' not found", "type": "api_error"}}


def add_embed_routes(app: Any, model: EmbedModel, body_of: Callable[[Any], Any]) -> None:
    """Mount the three embedding endpoints on the shim's FastAPI ``app``; ``body_of`` records requests."""
    from fastapi import Request  # optional, heavy: the llm extra's server
    from fastapi.concurrency import run_in_threadpool  # optional, heavy: the llm extra's server
    from fastapi.responses import JSONResponse  # optional, heavy: the llm extra's server

    def ollama_error(message: str, status: int) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    @app.post("/api/embed")
    async def embed(request: Request) -> Any:
        body = await body_of(request)
        if not isinstance(body, dict) or not model.serves(body.get("model")):
            return ollama_error(
                f"model '{body.get('model') if isinstance(body, dict) else None}' not found", 404
            )
        texts = _texts(body.get("input", []))
        if texts is None:
            return ollama_error("invalid input type: input must be a string or a list of strings", 400)
        vectors, nanos = await run_in_threadpool(_timed, model, texts)
        return {"model": model.name, "embeddings": vectors, "total_duration": nanos, "load_duration": 0,
                "prompt_eval_count": sum(len(t.split()) for t in texts)}  # fmt: skip

    @app.post("/api/embeddings")
    async def embeddings(request: Request) -> Any:
        body = await body_of(request)
        if not isinstance(body, dict) or not model.serves(body.get("model")):
            return ollama_error("model not found", 404)
        prompt = body.get("prompt")
        if not isinstance(prompt, str):
            return ollama_error("prompt must be a string", 400)
        vectors, _ = await run_in_threadpool(_timed, model, [prompt])
        return {"embedding": vectors[0]}

    @app.post("/v1/embeddings")
    async def v1_embeddings(request: Request) -> Any:
        body = await body_of(request)
        if not isinstance(body, dict) or not model.serves(body.get("model")):
            return JSONResponse(v1_not_found(body), status_code=404)
        texts = _texts(body.get("input"))
        encoding = body.get("encoding_format") or "float"
        if texts is None or encoding not in ("float", "base64"):
            problem = (
                "input must be a string or a list of strings" if texts is None else "bad encoding_format"
            )
            return JSONResponse(
                {"error": {"message": problem, "type": "invalid_request_error"}}, status_code=400
            )
        vectors, _ = await run_in_threadpool(_timed, model, texts)
        tokens = sum(len(t.split()) for t in texts)
        return {
            "object": "list",
            "data": [_v1_item(i, v, encoding) for i, v in enumerate(vectors)],
            "model": model.name,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
