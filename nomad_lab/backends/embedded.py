"""The embedded default backend: llama-cpp-python in-process, with the GGUFs that install from PyPI.

Why in-process and not the library's own chat handler: nomad-lab needs the exact prompt token count
of every call (the calibrator learns from it) on streamed calls too, and llama-cpp-python reports
usage only when not streaming. So this module formats the chat itself (the GGUF's Jinja template, or
a named format for template-less models), tokenizes it, and hands the tokens to ``create_completion``;
the prompt count is then ``len(tokens)`` by construction, streamed or not.

It also behaves like Ollama where a study would notice: ``num_ctx`` sets the real context (the model
is reloaded when it changes, as Ollama does), unset samplers take Ollama's defaults, a prompt longer
than the window is truncated from the middle (Ollama keeps ``num_keep`` = 4 leading tokens) instead of
raising, and a JSON-schema ``format`` becomes a GBNF grammar (only this form constrains llama.cpp).

Loading the GGUFs (once per process) is ``llama_models``; the prompt formatting, grammars and truncation
(with llama-cpp-python's ``gemma`` gotcha: it silently DROPS system messages) are ``llama_format``.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from nomad_lab.backends.base import (
    ChatChunk,
    ChatRequest,
    ChatResult,
    Message,
    ModelEntry,
    ModelInfo,
    Prefill,
    Usage,
    model_info_from_show,
    normalize_result,
    normalize_stream,
)
from nomad_lab.backends.llama_format import chat_formatter, grammar_for, truncate_middle
from nomad_lab.backends.llama_models import (
    DEFAULT_N_CTX,
    DEFAULT_THREADS,
    OLLAMA_SAMPLER_DEFAULTS,
    LoadedModel,
    bounded_n_ctx,
    load_model,
    loaded_model,
    resolve_model_path,
    show_payload,
)
from nomad_lab.backends.logits import ON_TOPIC_PREFIX, LogitsRecorder, word_masses
from nomad_lab.backends.work_log import note_prefill, note_use

__all__ = ["DEFAULT_N_CTX", "DEFAULT_THREADS", "EmbeddedBackend", "resolve_model_path", "show_payload"]
"""The loader's names other modules take from here, as they did before the split."""

log = logging.getLogger(__name__)


@dataclass
class _Prepared:
    loaded: LoadedModel
    tokens: list[int]
    original_count: int
    kwargs: dict[str, Any]
    structured: bool
    name: str


class EmbeddedBackend:
    """llama.cpp in-process. ``model`` is an alias (``gemma3-270m``, ``smollm2-135m``) or a GGUF path."""

    kind = "embedded"

    def __init__(
        self,
        model: str = "gemma3-270m",
        *,
        n_ctx: int = DEFAULT_N_CTX,
        threads: int = DEFAULT_THREADS,
        chat_format: str | None = None,
    ) -> None:
        self.model = model
        self.n_ctx = bounded_n_ctx(n_ctx)
        self.threads = threads
        self.chat_format = chat_format
        self.name, self.path = resolve_model_path(model)
        note_use("models", f"embedded:{self.name}", str(self.path))
        self._formatter: Any = None

    # -- model metadata

    def loaded(self, n_ctx: int | None = None) -> LoadedModel:
        return load_model(self.path, bounded_n_ctx(n_ctx, self.n_ctx), self.threads)

    def loaded_now(self) -> LoadedModel | None:
        """The loaded instance for this file, if any, without loading it."""
        return loaded_model(self.path)

    def _check_model(self, model: str | None) -> None:
        if model not in (None, self.model, self.name):
            raise ValueError(f"the embedded backend serves {self.name!r}, not {model!r}")

    def show(self, model: str | None = None) -> ModelInfo:
        self._check_model(model)
        return model_info_from_show(self.name, show_payload(self.loaded()), self.path.stat().st_size)

    def list_models(self) -> list[ModelEntry]:
        info = self.show()
        return [ModelEntry(self.name, info.size_bytes, info.parameter_size, info.quantization)]

    # -- chat

    @contextmanager
    def _session(self, request: ChatRequest) -> Iterator[_Prepared]:
        """The request prepared on a live model, with the model's lock held throughout.

        Another thread may reload the model (a different ``num_ctx``) between our load and our lock;
        a closed instance is then skipped and the current one taken.
        """
        self._check_model(request.model)
        while True:
            loaded = self.loaded(request.options.num_ctx)
            with loaded.lock:
                if loaded.closed:
                    continue
                yield self._prepare(request, loaded)
                return

    def _prepare(self, request: ChatRequest, loaded: LoadedModel) -> _Prepared:
        opts = request.options
        if self._formatter is None:  # depends on the file only, so it survives a num_ctx reload
            self._formatter = chat_formatter(loaded.llama, self.chat_format)
        formatted = self._formatter([dict(m) for m in request.messages])
        tokens = loaded.llama.tokenize(
            formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
        )
        predict = opts.num_predict if opts.num_predict and opts.num_predict > 0 else 0
        reserve = min(predict or 256, loaded.n_ctx // 4)
        kept = truncate_middle(tokens, loaded.n_ctx - reserve)
        if len(kept) < len(tokens):
            log.warning(
                "%s: prompt of %d tokens exceeds num_ctx %d; truncated to %d from the middle",
                self.name,
                len(tokens),
                loaded.n_ctx,
                len(kept),
            )
        samplers = {
            **OLLAMA_SAMPLER_DEFAULTS,
            **{k: v for k, v in opts.samplers().items() if k in OLLAMA_SAMPLER_DEFAULTS},
        }
        grammar = grammar_for(opts.format)
        kwargs: dict[str, Any] = {
            "max_tokens": predict,
            "temperature": samplers["temperature"],
            "top_p": samplers["top_p"],
            "top_k": int(samplers["top_k"]),
            "min_p": samplers["min_p"],
            "repeat_penalty": samplers["repeat_penalty"],
            "stop": formatted.stop,
            "stopping_criteria": formatted.stopping_criteria,
            "grammar": grammar,
        }
        # No seed means a fresh one per call, as in Ollama; llama-cpp-python would otherwise derive the
        # same seed every call from the instance seed and make "unseeded" sampling deterministic.
        kwargs["seed"] = opts.seed if opts.seed is not None else random.getrandbits(31)
        return _Prepared(loaded, kept, len(tokens), kwargs, grammar is not None, self.name)

    @staticmethod
    def _begin(prep: _Prepared) -> int:
        """Reset the perf counters; returns how many prompt tokens the KV cache already holds."""
        import llama_cpp  # optional, heavy: the llm extra
        from llama_cpp import Llama  # optional, heavy: the llm extra

        llama = prep.loaded.llama
        llama_cpp.llama_perf_context_reset(llama.ctx)
        return Llama.longest_token_prefix(llama._input_ids.tolist(), prep.tokens)

    @staticmethod
    def _usage(prep: _Prepared, completion_tokens: int, cached: int) -> Usage:
        import llama_cpp  # optional, heavy: the llm extra

        perf = llama_cpp.llama_perf_context(prep.loaded.llama.ctx)
        note_prefill(prep.name, int(perf.n_p_eval))
        return Usage(
            prompt_tokens=len(prep.tokens),
            completion_tokens=completion_tokens,
            prompt_eval_ms=perf.t_p_eval_ms,
            eval_ms=perf.t_eval_ms,
            source="llama_cpp:tokenized-prompt",
            # never the last token: llama.cpp re-evaluates it for its logits (core.prefix_cache rule 1)
            cached_prompt_tokens=min(cached, len(prep.tokens) - 1),
        )

    def forget_prefix(self) -> None:
        """Make the next call prefill its whole prompt (a cold measurement): llama.cpp otherwise reuses
        the longest common prefix with the previous call's tokens still in the KV cache, as Ollama does."""
        loaded = self.loaded_now()
        if loaded is not None:
            with loaded.lock:
                loaded.llama.reset()

    # -- prefill probe (``PrefillProbe``): what placement studies measure, without llama.cpp internals

    def formatter(self) -> Any:
        """The chat formatter of this file (built once: it depends on the file, not on ``n_ctx``)."""
        if self._formatter is None:
            self._formatter = chat_formatter(self.loaded().llama, self.chat_format)
        return self._formatter

    def render(self, messages: list[Message]) -> str:
        return self.formatter()([dict(m) for m in messages]).prompt

    def tokens(self, messages: list[Message]) -> list[int]:
        """The tokens :meth:`prefill_messages` evaluates for ``messages``: the input of exact accounting."""
        return self._tokenize(self.loaded().llama, self.render(messages))

    @staticmethod
    def _tokenize(llama: Any, prompt: str) -> list[int]:
        return llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)

    def prefill_messages(self, messages: list[Message]) -> Prefill:
        return self.prefill(self.render(messages))

    def prefill(self, prompt: str) -> Prefill:
        import llama_cpp  # optional, heavy: the llm extra
        from llama_cpp import Llama  # optional, heavy: the llm extra

        loaded = self.loaded()
        with loaded.lock:
            llama = loaded.llama
            tokens = self._tokenize(llama, prompt)
            # llama.cpp re-evaluates at least the last token to produce logits
            reused = min(Llama.longest_token_prefix(llama._input_ids.tolist(), tokens), len(tokens) - 1)
            llama_cpp.llama_perf_context_reset(llama.ctx)
            llama.create_completion(tokens, max_tokens=1, temperature=0.0)
            perf = llama_cpp.llama_perf_context(llama.ctx)
        note_prefill(self.name, int(perf.n_p_eval))
        return Prefill(len(tokens), int(perf.n_p_eval), reused, float(perf.t_p_eval_ms))

    def load_ms(self) -> float:
        return self.loaded().load_ms

    def chat(self, request: ChatRequest) -> ChatResult:
        """One call; with ``options.logprobs`` each generated token carries its raw-logit alternatives."""
        started = time.perf_counter()
        top = request.options.logprobs
        with self._session(request) as prep:
            cached = self._begin(prep)
            recorder = LogitsRecorder() if top is not None else None
            extra = {"logits_processor": [recorder]} if recorder is not None else {}
            out = prep.loaded.llama.create_completion(
                prompt=prep.tokens, stream=False, **prep.kwargs, **extra
            )
            usage = self._usage(prep, out["usage"]["completion_tokens"], cached)
            logprobs = recorder.choices(prep.loaded.llama, len(prep.tokens), top) if recorder else None
        choice = out["choices"][0]
        return normalize_result(
            choice["text"],
            None,
            usage=usage,
            done_reason=choice.get("finish_reason"),
            structured=prep.structured,
            ms=(time.perf_counter() - started) * 1e3,
            model=prep.name,
            logprobs=logprobs,
        )

    def prefill_confidence(
        self, request: ChatRequest, answer_prefix: str = ON_TOPIC_PREFIX
    ) -> tuple[float, int]:
        """P(true) from one forward pass over the prompt plus ``answer_prefix``, without generating.

        The cheap path of the judge's cost study: the prompt is prefilled once (reusing whatever prefix
        the KV cache already holds) and the next-token distribution after ``{"on_topic":`` is read; the
        grammar allows an optional space there, and the " true"/"true" variants cover both. Returns the
        confidence and the number of tokens evaluated in this call. The constrained ``chat`` stays the
        reference path; the benchmark measures how often the two agree.
        """
        import numpy as np  # heavy

        with self._session(request) as prep:
            llama = prep.loaded.llama
            cached = self._begin(prep)
            tokens = prep.tokens + llama.tokenize(answer_prefix.encode("utf-8"), add_bos=False, special=False)
            reuse = min(cached, len(tokens) - 1)  # at least one token must be evaluated to get logits
            llama.n_tokens = reuse
            llama.eval(tokens[reuse:])
            logits = np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),))
            masses = word_masses(llama, np.asarray(logits, dtype=np.float64))
        note_prefill(prep.name, len(tokens) - reuse)
        total = masses["true"] + masses["false"]
        return (masses["true"] / total if total > 0 else float("nan")), len(tokens) - reuse

    def chat_stream(self, request: ChatRequest) -> Iterator[ChatChunk]:
        return normalize_stream(self._raw_stream(request))

    def _raw_stream(self, request: ChatRequest) -> Iterator[ChatChunk]:
        with self._session(request) as prep:
            llama = prep.loaded.llama
            cached = self._begin(prep)
            finish = None
            for part in llama.create_completion(prompt=prep.tokens, stream=True, **prep.kwargs):
                choice = part["choices"][0]
                finish = choice.get("finish_reason") or finish
                if choice.get("text"):
                    yield ChatChunk(choice["text"], structured=prep.structured)
            # Tokens decoded after the prompt = generated tokens; the last one is not decoded when
            # generation stops on the length limit.
            generated = llama.n_tokens - len(prep.tokens) + (1 if finish == "length" else 0)
            usage = self._usage(prep, max(generated, 0), cached)
        yield ChatChunk(done=True, done_reason=finish, usage=usage, structured=prep.structured)
