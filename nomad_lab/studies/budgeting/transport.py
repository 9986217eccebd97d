"""The transport effect: one long prompt through Ollama's native API and through its ``/v1`` layer.

The seed moved chat from Ollama's OpenAI-compatible ``/v1`` endpoint to the native ``/api/chat``
because ``/v1`` cannot carry ``options.num_ctx``: the model runs at its default context and a longer
prompt is truncated from the middle, silently. The native path sends the window the context resolver
chose, so the whole prompt is processed. This sends the same long prompt both ways and reports the
tokens each path says it processed (``prompt_eval_count`` / ``usage.prompt_tokens``), beside the
structural estimate, so the loss is a measured number on the user's own server and model.

It needs a real Ollama (or ``nomad-lab serve``, which truncates the way Ollama does); with none it
says so instead of guessing.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nomad_lab.backends.base import ChatOptions, ChatRequest
from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.token_estimator import estimate_tokens
from nomad_lab.services.model_calls import chat_call
from nomad_lab.studies.params import CORPUS, STORE, positive
from nomad_lab.studies.result import Result
from nomad_lab.studies.shape import Param, Params, Study

HOST_ENV = "OLLAMA_HOST"


class NeedsOllamaError(NomadLabError):
    """No server to measure against."""


def base_url(host: str) -> str:
    """A host the way ``OLLAMA_HOST`` is written (scheme and port optional) as a base URL."""
    base = (host if "://" in host else f"http://{host}").rstrip("/")
    return base if base.count(":") == 2 else f"{base}:11434"


def resolve_host(host: str | None) -> str:
    """``host``, else ``OLLAMA_HOST``, else a plain error saying a real server is needed."""
    chosen = (host or os.environ.get(HOST_ENV, "")).strip()
    if not chosen:
        raise NeedsOllamaError(
            "study transport needs a real Ollama server: set OLLAMA_HOST=host:port (or pass --host); "
            "`nomad-lab serve --model embedded:gemma3-270m` serves an embedded model over Ollama's API"
        )
    return base_url(chosen)


def long_prompt(corpus_dir: str | Path, chars: int) -> str:
    """The corpus's documents, in name order, concatenated to ``chars`` characters: a realistic RAG prompt."""
    parts, total = [], 0
    for path in sorted(Path(corpus_dir).glob("*.md")):
        text = path.read_text(encoding="utf-8")
        parts.append(text)
        total += len(text)
        if total >= chars:
            break
    return ("\n\n".join(parts))[:chars] + "\n\nIn one word: what is the main topic above?"


@dataclass(frozen=True)
class TransportResult:
    base_url: str
    model: str
    prompt_chars: int
    estimated_tokens: int
    num_ctx: int
    native_prompt_tokens: int | None
    v1_prompt_tokens: int | None

    @property
    def lost_on_v1(self) -> int | None:
        if self.native_prompt_tokens is None or self.v1_prompt_tokens is None:
            return None
        return self.native_prompt_tokens - self.v1_prompt_tokens

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"lost_on_v1": self.lost_on_v1}


def measure(url: str, model: str, prompt: str, num_ctx: int) -> TransportResult:
    """One call each way, one generated token, temperature 0; the tokens each path reports processing."""
    from nomad_lab.backends.ollama_native import OllamaBackend  # heavy
    from nomad_lab.backends.openai_compat import OpenAICompatBackend  # heavy

    messages = [{"role": "user", "content": prompt}]
    native = chat_call(
        OllamaBackend(url, model),
        ChatRequest(messages, ChatOptions(num_ctx=num_ctx, num_predict=1, temperature=0), model),
        purpose="transport",
    )
    v1 = chat_call(
        OpenAICompatBackend(f"{url}/v1", model),
        ChatRequest(messages, ChatOptions(num_predict=1, temperature=0), model),
        purpose="transport",
    )
    return TransportResult(
        base_url=url,
        model=model,
        prompt_chars=len(prompt),
        estimated_tokens=estimate_tokens(prompt),
        num_ctx=num_ctx,
        native_prompt_tokens=native.usage.prompt_tokens,
        v1_prompt_tokens=v1.usage.prompt_tokens,
    )


def markdown(result: TransportResult) -> str:
    lost = result.lost_on_v1
    share = (
        ""
        if lost is None or not result.native_prompt_tokens
        else f" ({lost / result.native_prompt_tokens:.0%})"
    )
    return "\n".join(
        [
            f"model {result.model} at {result.base_url}; prompt {result.prompt_chars:,} chars, "
            f"~{result.estimated_tokens:,} tokens by the structural estimate",
            "",
            "| path | context sent | prompt tokens processed |",
            "|---|---|---:|",
            f"| native /api/chat | num_ctx {result.num_ctx} | {result.native_prompt_tokens} |",
            f"| /v1/chat/completions | (cannot be sent: server default) | {result.v1_prompt_tokens} |",
            "",
            f"tokens the /v1 path did not process: {lost}{share}",
        ]
    )


PARAMS = (
    Param("host", str, None, f"Ollama host (default: ${HOST_ENV})"),
    Param("model", str, None, "a model installed on that server", required=True),
    Param("num_ctx", int, 8192, "the window the native path sends", check=positive),
    Param("prompt_chars", int, 24_000, "length of the long prompt", check=positive),
    CORPUS,
    STORE,
)


def compute(params: Params) -> TransportResult:
    """The study from its declared parameters (``host`` None: ``$OLLAMA_HOST``)."""
    url = resolve_host(params.host)
    prompt = long_prompt(params.corpus, params.prompt_chars)
    return measure(url, params.model, prompt, params.num_ctx)


def result(measured: TransportResult) -> Result:
    """``transport.json``: the tokens each path reports processing (the command prints the table)."""
    said = markdown(measured)
    return Result("transport", value=measured, json={"transport.json": measured.to_json()}, said=said)


STUDY = Study(
    name="transport",
    title="The transport effect: tokens processed by native /api/chat against /v1 (needs a real Ollama)",
    run=compute,
    rows=lambda result: [result.to_json()],
    command=("study", "transport", "--model", "llama3:8b"),
    tables=(),
    published=False,  # no Ollama runs here
    stage=70,
)
