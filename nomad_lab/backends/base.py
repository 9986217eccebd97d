"""The one chat interface every nomad-lab study talks through, whatever serves the model.

Why one interface: the seed's worst bug lived in the transport (the OpenAI-compatible path silently
dropped ``num_ctx``, so every conversation ran at the backend default), and it went unnoticed because
each caller spoke to its backend differently. Here every backend takes the same ``ChatRequest``,
returns the same ``ChatResult``/``ChatChunk`` shapes, and says honestly what it could not do: whether
the output was grammar-constrained (``structured``) and where each token count came from
(``Usage.source``).

Think-tag normalization (SPEC §6) is done here once, in ``normalize_stream`` and ``normalize_result``,
so no backend can forget it or do it differently.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from nomad_lab.core.context_window import context_length_from
from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.think_stream import ThinkTagSplitter, normalize_non_streamed
from nomad_lab.core.verdict_confidence import TokenChoice

Message = Mapping[str, Any]
JsonFormat = dict[str, Any] | str


@dataclass(frozen=True)
class ChatOptions:
    """What a caller may ask of a chat call; ``None`` means "not sent", never "send a default".

    Not every backend can honour every field: the OpenAI-compatible path never carries ``num_ctx``
    (SPEC §7.3), and ``keep_alive`` means nothing in-process. Backends ignore what they cannot send
    rather than guess.
    """

    num_ctx: int | None = None
    num_predict: int | None = None
    temperature: float | None = None
    seed: int | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    repeat_penalty: float | None = None
    keep_alive: str | float | None = None
    format: JsonFormat | None = None
    """A JSON-schema dict, or ``"json"`` for any JSON object."""
    think: bool | str | None = None
    thinking_capable: bool = False
    """The model has the "thinking" capability: lets the OpenAI path send ``reasoning_effort: none``."""
    logprobs: int | None = None
    """Ask for each generated token's log-probability and this many top alternatives (None: don't)."""

    def samplers(self) -> dict[str, Any]:
        """The Ollama ``options`` entries that are set, in the order Ollama documents them."""
        names = ("num_ctx", "num_predict", "temperature", "seed", "top_p", "top_k", "min_p", "repeat_penalty")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


@dataclass(frozen=True)
class ChatRequest:
    """One chat call. ``model`` None means the model named in the backend spec."""

    messages: list[Message]
    options: ChatOptions = field(default_factory=ChatOptions)
    model: str | None = None
    stream: bool = False


@dataclass(frozen=True)
class Usage:
    """Token counts of one call, and where they came from.

    ``source`` exists because backends differ: Ollama reports ``prompt_eval_count`` (older versions
    omitted it for cached prompts), llama_cpp.server never streams usage, and a count recovered by a
    second request is not the same evidence as one the server reported. Calibration data must say which.
    """

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_eval_ms: float | None = None
    eval_ms: float | None = None
    source: str = "none"
    cached_prompt_tokens: int | None = None
    """Prompt tokens served from the KV cache (prefix reuse), where the backend can tell."""


NO_USAGE = Usage()


@dataclass(frozen=True)
class ChatResult:
    """A finished chat call. ``structured`` is True only if the output was grammar-constrained."""

    content: str
    thinking: str = ""
    usage: Usage = NO_USAGE
    done_reason: str | None = None
    structured: bool = False
    ms: float = 0.0
    model: str | None = None
    logprobs: tuple[TokenChoice, ...] | None = None
    """Per generated token, when asked (``ChatOptions.logprobs``) and the backend gave them; else None."""


@dataclass(frozen=True)
class ChatChunk:
    """One piece of a streamed reply; usage and done_reason arrive only on ``done`` chunks."""

    content: str = ""
    thinking: str = ""
    done: bool = False
    done_reason: str | None = None
    usage: Usage | None = None
    structured: bool = False


@dataclass(frozen=True)
class ModelInfo:
    """What a backend knows about a model (SPEC §4.1, §7.4), in the shape the context resolver reads.

    ``model_info`` is the raw GGUF key/value map (numbers as numbers) so KV-bytes-per-token can be
    computed from it; ``samplers`` are the modelfile-declared sampler defaults.
    """

    name: str
    context_length: int | None = None
    modelfile_num_ctx: int | None = None
    parameter_size: str | None = None
    quantization: str | None = None
    capabilities: tuple[str, ...] = ()
    model_info: dict[str, Any] = field(default_factory=dict)
    samplers: dict[str, float] = field(default_factory=dict)
    size_bytes: int | None = None

    @property
    def has_thinking(self) -> bool:
        return "thinking" in self.capabilities


@dataclass(frozen=True)
class ModelEntry:
    """One row of a model list (``/api/tags``): enough to pick a model and budget its weights."""

    name: str
    size_bytes: int | None = None
    parameter_size: str | None = None
    quantization: str | None = None


class BackendError(NomadLabError, RuntimeError):
    """A backend call failed; ``reason`` is a short stable label for logs and fail-open records.

    Labels: ``timeout``, ``connection-refused``, ``connection-error``, ``http-<status>``,
    ``bad-response`` (the server answered something that is not the protocol), ``model-not-found``.
    """

    def __init__(self, reason: str, detail: str = "", status: int | None = None) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.status = status


@runtime_checkable
class Backend(Protocol):
    """A place that serves chat models. ``model`` is the default model named by the spec, if any."""

    kind: str
    model: str | None

    def chat(self, request: ChatRequest) -> ChatResult:
        """One non-streamed call; think tags already split out of ``content``."""
        ...

    def chat_stream(self, request: ChatRequest) -> Iterator[ChatChunk]:
        """A streamed call, think-normalized, ending with the extra flush chunk of SPEC §6 when due."""
        ...

    def show(self, model: str | None = None) -> ModelInfo:
        """Model metadata; raises ``BackendError`` when the backend cannot say."""
        ...

    def list_models(self) -> list[ModelEntry]:
        """Installed models."""
        ...


@dataclass(frozen=True)
class Prefill:
    """One prompt evaluated on a model's single slot, as the engine itself counted and timed it."""

    prompt_tokens: int
    evaluated_tokens: int | None  # tokens the engine ran through the model (None: a server did not say)
    reused_tokens: int | None  # tokens served from the KV cache (the common prefix with the last call)
    ms: float | None  # the engine's own prompt-eval time, not wall clock


@runtime_checkable
class PrefillProbe(Protocol):
    """What a prefill study needs from a backend that runs the model in-process.

    Why a capability and not the engine's internals: token counts and prefill timings live in the
    engine's private state (llama.cpp's perf context and input ids); only the backend may read them, so
    a study stays the same when the engine or its bindings change. ``load_ms`` is the cost of the last
    (re)load, which a context-window change pays.
    """

    def render(self, messages: list[Message]) -> str:
        """The exact prompt text a chat call with ``messages`` would evaluate."""
        ...

    def prefill(self, prompt: str) -> Prefill:
        """Evaluate ``prompt`` plus one greedy token, reusing whatever prefix the KV cache holds."""
        ...

    def tokens(self, messages: list[Message]) -> list[int]:
        """The exact prompt tokens a call with ``messages`` evaluates (what the cache compares)."""
        ...

    def prefill_messages(self, messages: list[Message]) -> Prefill:
        """:meth:`prefill` of the prompt ``messages`` render to."""
        ...

    def forget_prefix(self) -> None:
        """Make the next call evaluate its whole prompt."""
        ...

    def load_ms(self) -> float:
        """Milliseconds the model's current instance took to load (loading it now if needed)."""
        ...


def resolve_model(backend: Backend, request_model: str | None) -> str:
    """The model a call is for: the request's, else the spec's; neither is a caller error."""
    model = request_model or backend.model
    if not model:
        raise ValueError(f"no model given: name one in the request or in the {backend.kind} backend spec")
    return model


def normalize_result(
    raw_content: str,
    native_thinking: str | None,
    *,
    usage: Usage,
    done_reason: str | None,
    structured: bool,
    ms: float,
    model: str | None,
    logprobs: tuple[TokenChoice, ...] | None = None,
) -> ChatResult:
    """A ``ChatResult`` with ``<think>`` blocks moved out of the content (SPEC §6, non-streamed)."""
    split = normalize_non_streamed(raw_content or "", native_thinking or "")
    return ChatResult(split.content, split.thinking, usage, done_reason, structured, ms, model, logprobs)


def normalize_stream(raw: Iterable[ChatChunk]) -> Iterator[ChatChunk]:
    """Split ``<think>`` tags out of a raw chunk stream (SPEC §6).

    Each raw chunk's ``thinking`` is the backend's native thinking; tag-delimited thinking found in the
    content is appended to it. When the stream ends with text still held back (a partial tag, or an
    unclosed ``<think>``), one extra ``done`` chunk carries it, as the seed does.
    """
    splitter = ThinkTagSplitter()
    structured = False
    for chunk in raw:
        structured = chunk.structured
        split = splitter.push(chunk.content)
        yield ChatChunk(
            split.content,
            chunk.thinking + split.thinking,
            chunk.done,
            chunk.done_reason,
            chunk.usage,
            chunk.structured,
        )
    tail = splitter.flush()
    if tail.content or tail.thinking:
        yield ChatChunk(tail.content, tail.thinking, done=True, structured=structured)


def collect_stream(chunks: Iterable[ChatChunk], *, ms: float = 0.0, model: str | None = None) -> ChatResult:
    """Fold a (normalized) chunk stream into one ``ChatResult``: the last usage and done_reason win."""
    content: list[str] = []
    thinking: list[str] = []
    usage, done_reason, structured = NO_USAGE, None, False
    for chunk in chunks:
        content.append(chunk.content)
        thinking.append(chunk.thinking)
        usage = chunk.usage or usage
        done_reason = chunk.done_reason or done_reason
        structured = structured or chunk.structured
    return ChatResult("".join(content), "".join(thinking), usage, done_reason, structured, ms, model)


# --- /api/show parsing (SPEC §4.1, §7.4), shared by every backend that can produce a show payload ---

# At most 19 digits (an int64, Ollama's type): a longer number is absurd, and int() of a 5,000-digit
# string raises instead of parsing, so such a line is ignored rather than crashing show().
_NUM_CTX_LINE = re.compile(r"^\s*num_ctx\s+(\d{1,19})\s*$", re.MULTILINE)
SAMPLER_KEYS = ("temperature", "top_p", "top_k", "min_p", "repeat_penalty")


def modelfile_num_ctx(parameters: str | None) -> int | None:
    """The modelfile ``PARAMETER num_ctx`` (first match), which caps the context like a trained limit."""
    match = _NUM_CTX_LINE.search(parameters or "")
    return int(match.group(1)) if match else None


def modelfile_samplers(parameters: str | None) -> dict[str, float]:
    """Sampler defaults declared in the modelfile: last occurrence wins, finite and ≥ 0 only."""
    found: dict[str, float] = {}
    for key in SAMPLER_KEYS:
        matches = re.findall(rf"^\s*{key}\s+(-?[\d.]+)\s*$", parameters or "", re.MULTILINE)
        if not matches:
            continue
        try:
            value = float(matches[-1])
        except ValueError:
            continue
        if math.isfinite(value) and value >= 0:
            found[key] = value
    return found


def _mapping(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def model_info_from_show(name: str, show: Mapping[str, Any], size_bytes: int | None = None) -> ModelInfo:
    """Parse an Ollama ``/api/show`` body (as a plain dict) into ``ModelInfo``.

    A server may answer anything: fields of the wrong JSON type are dropped rather than trusted, and
    numbers are bounded by their readers (``context_length_from``, ``modelfile_num_ctx``)."""
    raw_info = _mapping(show.get("model_info") or show.get("modelinfo"))
    details = _mapping(show.get("details"))
    parameters = show.get("parameters") if isinstance(show.get("parameters"), str) else None
    capabilities = show.get("capabilities")
    return ModelInfo(
        name=name,
        context_length=context_length_from(raw_info),
        modelfile_num_ctx=modelfile_num_ctx(parameters),
        parameter_size=_text(details.get("parameter_size")),
        quantization=_text(details.get("quantization_level")),
        capabilities=tuple(c for c in capabilities if isinstance(c, str))
        if isinstance(capabilities, list)
        else (),
        model_info=raw_info,
        samplers=modelfile_samplers(parameters),
        size_bytes=size_bytes,
    )
