"""Context-window resolution: trained context, exact KV cost from GGUF metadata, and memory (SPEC §4).

Why it matters: asking Ollama for a different ``num_ctx`` unloads and reloads the model, stalling the
turn and discarding the KV cache, so the window is resolved once per model and memoized. The KV cost
uses ``head_count_kv``, not ``head_count`` (grouped-query attention makes them differ 4×), and the
4096 floor never overrides a model's trained ceiling (tinyllama trains to 2048; pushing RoPE past it
produces garbage).

Beyond the seed, as explicit options whose defaults reproduce it: the KV cache element type (the seed
always budgets f16), sliding-window layers (whose cache stops growing at the window), and parallel
slots (Ollama allocates one full context per slot). Absurd metadata (negative, non-numeric, NaN,
astronomically large) is ignored or bounded; nothing here ever allocates anything of that size.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from nomad_lab.core.jsstring import js_parse_float, js_parse_int
from nomad_lab.core.kv_layers import has_layer_detail, layer_elements

CONTEXT_LADDER = (4096, 8192, 16384, 32768, 65536, 131072)
MIN_CONTEXT = 4096
GGUF_U32_MAX = 2**32 - 1
"""GGUF stores ``<arch>.context_length`` as uint32: a larger value cannot be a real trained context."""
UNKNOWN_BACKEND_CONTEXT = 8192
MEMORY_SAFETY_FRACTION = 0.8
CPU_RAM_SHARE = 0.5
DEFAULT_PARAMETER_BILLIONS = 8.0

MAX_LAYERS = 100_000
"""More layers than this in per-layer metadata is absurd; the arrays are refused rather than expanded."""
KIB = 1024
# (parameter billions ceiling, f16 KV bytes per token) when the GGUF metadata is incomplete.
KV_FALLBACK_TABLE = ((1.5, 32 * KIB), (4, 64 * KIB), (9, 128 * KIB), (15, 192 * KIB), (35, 256 * KIB))
KV_FALLBACK_LARGEST = 512 * KIB

# Bytes per cached element for llama.cpp's KV cache types (block formats: bytes per 32 elements).
KV_CACHE_TYPE_BYTES: dict[str, Fraction] = {
    "f32": Fraction(4),
    "f16": Fraction(2),
    "bf16": Fraction(2),
    "q8_0": Fraction(34, 32),
    "q5_1": Fraction(24, 32),
    "q5_0": Fraction(22, 32),
    "q4_1": Fraction(20, 32),
    "q4_0": Fraction(18, 32),
    "iq4_nl": Fraction(18, 32),
}

_PARAM_SIZE = re.compile(r"([\d.]+)\s*B", re.IGNORECASE)
_NAME_SIZE = re.compile(r"(\d+\.?\d*)\s*[bB](?![a-zA-Z])")


def positive_number(value: object) -> float | None:
    """``value`` if it is a finite number > 0 (bools and strings are not numbers), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int beyond float range is absurd metadata, not a size
        return None
    return number if math.isfinite(number) and number > 0 else None


def _cache_bytes(cache_type: str) -> Fraction:
    try:
        return KV_CACHE_TYPE_BYTES[cache_type.lower()]
    except KeyError:
        raise ValueError(
            f"unknown KV cache type {cache_type!r}; known: {', '.join(KV_CACHE_TYPE_BYTES)}"
        ) from None


def _trained_context(value: object) -> int | None:
    number = positive_number(value)
    return int(number) if number is not None and number <= GGUF_U32_MAX else None


def context_length_from(model_info: Mapping[str, Any] | None) -> int | None:
    """``<arch>.context_length`` if positive, else the first positive ``*.context_length`` key.

    Values above the uint32 range GGUF stores them in are absurd and ignored, like negative ones."""
    if not isinstance(model_info, Mapping):
        return None
    arch = model_info.get("general.architecture")
    if isinstance(arch, str) and (value := _trained_context(model_info.get(f"{arch}.context_length"))):
        return value
    for key, raw in model_info.items():
        if isinstance(key, str) and key.endswith(".context_length") and (value := _trained_context(raw)):
            return value
    return None


def seed_kv_bytes_per_token(model_info: Mapping[str, Any] | None, *, cache_type: str = "f16") -> int | None:
    """The seed's scalar formula alone, whatever the metadata holds (the "before" of hybrid models)."""
    elements = _seed_kv_elements(model_info)
    return None if elements is None else math.ceil(elements * _cache_bytes(cache_type))


def _seed_kv_elements(model_info: Mapping[str, Any] | None) -> Fraction | None:
    """KV elements per token by the seed's scalar formula.

    ``2 (K and V) × block_count × head_count_kv × key_length`` (times element bytes). ``head_count_kv``
    falls back to ``head_count`` (so a per-layer array charges every layer ``head_count``) and
    ``key_length`` to ``embedding_length / head_count`` (wrong for gemma3, whose GGUF states 256, not
    640/4 = 160)."""
    if not isinstance(model_info, Mapping):
        return None
    arch = model_info.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        return None
    layers = positive_number(model_info.get(f"{arch}.block_count"))
    kv_heads = positive_number(model_info.get(f"{arch}.attention.head_count_kv")) or positive_number(
        model_info.get(f"{arch}.attention.head_count")
    )
    head_dim = positive_number(model_info.get(f"{arch}.attention.key_length"))
    if head_dim is None:
        embedding = positive_number(model_info.get(f"{arch}.embedding_length"))
        heads = positive_number(model_info.get(f"{arch}.attention.head_count"))
        head_dim = embedding / heads if embedding and heads else None
    if not (layers and kv_heads and head_dim):
        return None
    return Fraction(2) * Fraction(layers) * Fraction(kv_heads) * Fraction(head_dim)


@dataclass(frozen=True)
class KvAccount:
    """KV bytes per token (None: use the size fallback), how it was counted, and what was bounded."""

    bytes_per_token: int | None
    method: str  # "scalar" (the seed's formula) | "per-layer" | "none"
    kv_layers: int = 0
    notes: tuple[str, ...] = ()


def kv_account(
    model_info: Mapping[str, Any] | None,
    *,
    cache_type: str = "f16",
    context: int | None = None,
    sliding_window: int | None = None,
    sliding_layers: int = 0,
) -> KvAccount:
    """KV bytes per token from GGUF keys, charging only the layers that keep a cache.

    Scalar metadata takes the seed's formula unchanged; per-layer arrays or ``full_attention_interval``
    take ``nomad_lab.core.kv_layers``. With ``sliding_window`` and ``sliding_layers`` (and a
    ``context``), that many charged layers cache at most ``sliding_window`` tokens, so their cost is
    spread over the whole context.
    """
    element = _cache_bytes(cache_type)
    if not isinstance(model_info, Mapping):
        return KvAccount(None, "none", notes=("no model_info",))
    arch = model_info.get("general.architecture")
    layers = (
        positive_number(model_info.get(f"{arch}.block_count")) if isinstance(arch, str) and arch else None
    )
    if not layers:
        return KvAccount(None, "none", notes=("architecture or block_count missing",))
    if isinstance(arch, str) and has_layer_detail(model_info, arch):
        if layers > MAX_LAYERS or layers != int(layers):
            return KvAccount(None, "none", notes=(f"block_count {layers:g} is not a plausible layer count",))
        account = layer_elements(model_info, arch, int(layers))
        if account.elements is None:
            return KvAccount(None, "none", notes=account.notes)
        elements, charged, method, notes = (
            account.elements,
            Fraction(account.kv_layers),
            "per-layer",
            account.notes,
        )
    else:
        seed = _seed_kv_elements(model_info)
        if seed is None:
            return KvAccount(None, "none", notes=("head counts or key length missing",))
        elements, charged, method, notes = seed, Fraction(layers), "scalar", ()
    if sliding_window and sliding_layers and context and charged:
        local = min(Fraction(sliding_layers), charged)
        elements = (
            elements * (charged - local + local * Fraction(min(sliding_window, context), context)) / charged
        )
    return KvAccount(math.ceil(elements * element), method, int(charged), notes)


def exact_kv_bytes_per_token(
    model_info: Mapping[str, Any] | None,
    *,
    cache_type: str = "f16",
    context: int | None = None,
    sliding_window: int | None = None,
    sliding_layers: int = 0,
) -> int | None:
    """KV bytes per token from GGUF keys (see ``kv_account``), or None if they do not give it."""
    return kv_account(
        model_info,
        cache_type=cache_type,
        context=context,
        sliding_window=sliding_window,
        sliding_layers=sliding_layers,
    ).bytes_per_token


def parse_parameter_billions(parameter_size: str | None, model_name: str | None = None) -> float | None:
    """Billions of parameters from ``details.parameter_size`` ("8.0B"), else from the model name."""
    for text, pattern in ((parameter_size, _PARAM_SIZE), (model_name, _NAME_SIZE)):
        if isinstance(text, str) and (match := pattern.search(text)):
            value = js_parse_float(match.group(1))
            if value is not None and math.isfinite(value):
                return value
    return None


def fallback_kv_bytes_per_token(parameter_billions: float | None, *, cache_type: str = "f16") -> int:
    """The seed's size table (f16), scaled to ``cache_type``; unknown size counts as 8B."""
    billions = parameter_billions if parameter_billions is not None else DEFAULT_PARAMETER_BILLIONS
    f16 = next((value for ceiling, value in KV_FALLBACK_TABLE if billions <= ceiling), KV_FALLBACK_LARGEST)
    return math.ceil(Fraction(f16) * _cache_bytes(cache_type) / 2)


def kv_bytes_per_token(
    model_info: Mapping[str, Any] | None,
    parameter_size: str | None = None,
    model_name: str | None = None,
    *,
    cache_type: str = "f16",
    context: int | None = None,
    sliding_window: int | None = None,
    sliding_layers: int = 0,
) -> int:
    """Exact KV bytes per token from GGUF metadata, else the parameter-size fallback table."""
    exact = exact_kv_bytes_per_token(
        model_info,
        cache_type=cache_type,
        context=context,
        sliding_window=sliding_window,
        sliding_layers=sliding_layers,
    )
    if exact is not None:
        return exact
    return fallback_kv_bytes_per_token(
        parse_parameter_billions(parameter_size, model_name), cache_type=cache_type
    )


def parse_user_cap(raw: object) -> int | None:
    """The ``ai.contextWindow`` setting: unset, "auto", unparseable or below 4096 means no cap."""
    if raw is None or raw == "auto":
        return None
    value = js_parse_int(raw)
    return value if value is not None and value >= MIN_CONTEXT else None


def default_available_bytes() -> int:
    """Half of physical RAM, the seed's CPU budget when no VRAM figure is known."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0
    return int(total * CPU_RAM_SHARE)


@dataclass(frozen=True)
class ContextWindow:
    """The resolved window, which ceiling bound it, and how many tokens memory could hold."""

    tokens: int
    limited_by: str  # "model" | "user" | "memory" | "floor" | "default"
    affordable_tokens: int | None = None


def _snap_to_ladder(value: float) -> int:
    rungs = [rung for rung in CONTEXT_LADDER if rung <= value]
    return rungs[-1] if rungs else MIN_CONTEXT


def resolve_context_window(
    *,
    model_max_ctx: float | None = None,
    modelfile_num_ctx: float | None = None,
    user_cap: float | None = None,
    available_bytes: float | None = None,
    model_bytes: float | None = None,
    kv_bytes: float | None = None,
    parallel: int = 1,
) -> ContextWindow:
    """SPEC §4.4: the smallest ceiling snapped down to the ladder, floored at 4096 but never above a
    trained or configured ceiling.

    ``parallel`` > 1 (an extension) divides the memory among that many slots, as Ollama allocates a
    full context per slot; the seed's behaviour is ``parallel=1``.
    """
    ceilings: list[tuple[float, str]] = []
    for value, source in ((model_max_ctx, "model"), (modelfile_num_ctx, "model"), (user_cap, "user")):
        if (number := positive_number(value)) is not None:
            ceilings.append((number, source))
    affordable: int | None = None
    available, kv = positive_number(available_bytes), positive_number(kv_bytes)
    if available and kv:
        weights = positive_number(model_bytes) or 0.0
        slots = max(1, int(parallel)) if positive_number(parallel) else 1
        affordable = max(0, math.floor((available * MEMORY_SAFETY_FRACTION - weights) / kv / slots))
        ceilings.append((affordable, "memory"))
    if not ceilings:
        return ContextWindow(UNKNOWN_BACKEND_CONTEXT, "default", affordable)

    binding_value, binding_source = min(ceilings, key=lambda ceiling: ceiling[0])
    snapped = _snap_to_ladder(binding_value)
    hard = [c for c in (model_max_ctx, modelfile_num_ctx, user_cap) if positive_number(c) is not None]
    hard_ceiling = min(float(c) for c in hard) if hard else math.inf
    if snapped <= MIN_CONTEXT:
        tokens = min(MIN_CONTEXT, hard_ceiling)
        return ContextWindow(int(tokens), "model" if tokens < MIN_CONTEXT else "floor", affordable)
    return ContextWindow(snapped, binding_source, affordable)


@dataclass(frozen=True)
class ModelFacts:
    """What the resolver needs from ``/api/show`` (or GGUF metadata) about one model."""

    context_length: int | None = None
    modelfile_num_ctx: int | None = None
    parameter_size: str | None = None
    model_info: Mapping[str, Any] | None = None
    size_bytes: int | None = None


class ContextWindowResolver:
    """Resolves a model's window once and memoizes it by model name until ``invalidate()``.

    Memoization is load-bearing: a different ``num_ctx`` makes Ollama reload the model. ``show`` is
    any callable returning an object with ``ModelFacts``' attributes (a backend's model info works).
    A model with neither a context length nor metadata (a non-Ollama backend) gets the user cap or
    8192; any exception gets 8192 "default", as in the seed's service wrapper.
    """

    def __init__(
        self,
        show: Callable[[str], Any],
        *,
        available_bytes: int | None = None,
        user_cap: object = None,
        cache_type: str = "f16",
        parallel: int = 1,
    ) -> None:
        _cache_bytes(cache_type)  # fail early on an unknown type
        self._show = show
        self._available = default_available_bytes() if available_bytes is None else available_bytes
        self._user_cap = parse_user_cap(user_cap)
        self._cache_type = cache_type
        self._parallel = parallel
        self._memo: dict[str, ContextWindow] = {}

    def resolve(self, model: str) -> ContextWindow:
        if model not in self._memo:
            self._memo[model] = self._compute(model)
        return self._memo[model]

    def invalidate(self, model: str | None = None) -> None:
        """Forget one model's window (or all), e.g. after the user changes the setting."""
        if model is None:
            self._memo.clear()
        else:
            self._memo.pop(model, None)

    def _compute(self, model: str) -> ContextWindow:
        try:
            facts = self._show(model)
            info = getattr(facts, "model_info", None)
            trained = positive_number(getattr(facts, "context_length", None)) or context_length_from(info)
            if not trained and not info:
                if self._user_cap is not None:
                    return ContextWindow(self._user_cap, "user")
                return ContextWindow(UNKNOWN_BACKEND_CONTEXT, "default")
            kv = kv_bytes_per_token(
                info, getattr(facts, "parameter_size", None), model, cache_type=self._cache_type
            )
            return resolve_context_window(
                model_max_ctx=trained,
                modelfile_num_ctx=getattr(facts, "modelfile_num_ctx", None),
                user_cap=self._user_cap,
                available_bytes=self._available,
                model_bytes=getattr(facts, "size_bytes", None),
                kv_bytes=kv,
                parallel=self._parallel,
            )
        except Exception:  # the seed falls back on any failure; a turn must not die here
            return ContextWindow(UNKNOWN_BACKEND_CONTEXT, "default")
