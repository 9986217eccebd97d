"""A prefill probe over a model server: the placement study's protocol on Ollama or an OpenAI-compatible
server, with the server's own counts and timings.

Why: the seed's figures came from a user's Ollama (231 vs 539 ms at turn 14 on llama3:8b), so the study
must run there unchanged. A server does not expose its token sequences, so the exact accounting reads
them from a local GGUF's tokenizer and chat template (``tokenizer``: the same model file, e.g. the
Ollama blob or the GGUF ``nomad-lab serve`` serves); each real call then reports what the server
counted: ``prompt_eval_count`` (the whole prompt, cached tokens included, as Ollama counts since 0.2),
``prompt_eval_cached_count`` (tokens read from the cache, where the server sends it) and
``prompt_eval_duration`` natively; ``usage`` and llama.cpp server's ``timings`` (``prompt_ms``,
``cache_n``) over ``/v1``. A server that does not say what it reused leaves ``evaluated_tokens`` None
and the check says "not reported"; one without a prompt time leaves ``ms`` None and cannot time the
cost model's sample.

A server has no cache reset: ``forget_prefix`` does nothing, and the study starts every chain of real
calls with a short known warm-up call instead. A server with several slots (``OLLAMA_NUM_PARALLEL``)
may serve a call from another slot than the last one's, which the check then shows as a difference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nomad_lab.backends import open_backend
from nomad_lab.backends.backend_spec import parse_spec
from nomad_lab.backends.base import ChatOptions, ChatRequest, Message, Prefill
from nomad_lab.backends.exact_tokens import gguf_vocab
from nomad_lab.backends.llama_format import chat_formatter
from nomad_lab.backends.llama_models import resolve_model_path


def tokenizer_path(spec: str, tokenizer: str | None) -> Path:
    """The GGUF whose tokenizer stands for the server's model: ``tokenizer`` (a path or an embedded
    alias), else the server's model name when it is an embedded alias (``gemma3-270m:latest``, as
    ``nomad-lab serve`` advertises it). Anything else is an error naming the option."""
    model = parse_spec(spec).model or ""
    for candidate in (tokenizer, model.removesuffix(":latest")):
        if candidate:
            try:
                return resolve_model_path(candidate)[1]
            except (ValueError, OSError):
                if candidate == tokenizer:
                    raise ValueError(
                        f"--tokenizer {tokenizer!r}: not a GGUF path or an embedded alias"
                    ) from None
    raise ValueError(
        f"{spec}: the exact accounting needs the served model's tokenizer: pass --tokenizer PATH.gguf "
        "(for Ollama, the model's blob under ~/.ollama/models/blobs)"
    )


class ServerPrefill:
    """``tokens`` / ``prefill_messages`` / ``forget_prefix`` over a backend spec (see the module)."""

    def __init__(self, spec: str, *, tokenizer: str | None = None, num_ctx: int | None = None) -> None:
        self.spec = spec
        self.backend = open_backend(spec)
        self.name = parse_spec(spec).model or spec
        self.num_ctx = num_ctx
        self._vocab: Any = gguf_vocab(str(tokenizer_path(spec, tokenizer)))
        self._format = chat_formatter(self._vocab, None)

    def tokens(self, messages: list[Message]) -> list[int]:
        formatted = self._format([dict(m) for m in messages])
        return self._vocab.tokenize(
            formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
        )

    def prefill_messages(self, messages: list[Message]) -> Prefill:
        """One greedy token after ``messages``, as the server counted and timed the prompt."""
        options = ChatOptions(num_ctx=self.num_ctx, num_predict=1, temperature=0.0, seed=0)
        usage = self.backend.chat(ChatRequest(list(messages), options)).usage
        prompt = usage.prompt_tokens or 0
        cached = usage.cached_prompt_tokens
        evaluated = prompt - cached if cached is not None else None
        return Prefill(prompt, evaluated, cached, usage.prompt_eval_ms)

    def forget_prefix(self) -> None:
        """Nothing: a server's cache cannot be reset (the study's warm-up call sets it instead)."""
