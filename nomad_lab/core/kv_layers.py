"""Per-layer KV accounting for hybrid models: only the layers that keep a KV cache are charged.

Why: GGUF metadata may give ``<arch>.attention.head_count_kv`` as a per-layer array (0 for layers
without attention KV, e.g. recurrent or convolution blocks), and some architectures keep full
attention only every ``<arch>.full_attention_interval`` layers (layer ``i`` keeps KV when
``(i + 1) % interval == 0``, as llama.cpp reads it). The seed reads a scalar: given an array it falls
back to ``head_count`` and charges every layer, which overstated one hybrid model's KV cost 64× in the
reference, so the window it resolved was far too small. Key and value lengths may also be per layer
(``key_length`` / ``value_length``); here K and V are charged separately.

Absurd metadata is bounded or refused with a reason, never a crash: an array longer than
``block_count`` is cut to it, a shorter one (which layers are missing?) or one with negative or
non-numeric entries is refused, a non-positive interval is ignored, and a model where no layer
would keep KV is refused (the caller then uses the parameter-size fallback, never a zero-sized cost).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

PER_LAYER_KEYS = (
    "attention.head_count_kv",
    "attention.head_count",
    "attention.key_length",
    "attention.value_length",
)
INTERVAL_KEY = "full_attention_interval"


@dataclass(frozen=True)
class LayerValues:
    """One per-layer quantity: the values (None if unusable) and why it was cut or refused."""

    values: tuple[float, ...] | None
    note: str | None = None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def per_layer(raw: object, layers: int, field: str) -> LayerValues:
    """``raw`` (a scalar or an array) as ``layers`` values; zeros allowed, negatives refused."""
    if raw is None:
        return LayerValues(None)
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        number = _number(raw)
        if number is None or number <= 0:
            return LayerValues(None, f"{field}: {raw!r} is not a positive number; ignored")
        return LayerValues((number,) * layers)
    numbers = [_number(item) for item in raw]
    if any(n is None for n in numbers):
        return LayerValues(None, f"{field}: array holds a non-numeric entry; refused")
    if any(n < 0 for n in numbers):  # type: ignore[operator]
        return LayerValues(None, f"{field}: array holds a negative entry; refused")
    if len(numbers) < layers:
        return LayerValues(
            None,
            f"{field}: array has {len(numbers)} entries for {layers} layers; refused (which are missing?)",
        )
    note = None
    if len(numbers) > layers:
        note = f"{field}: array has {len(numbers)} entries for {layers} layers; extra entries ignored"
    return LayerValues(tuple(numbers[:layers]), note)  # type: ignore[arg-type]


def has_layer_detail(model_info: Mapping[str, Any], arch: str) -> bool:
    """True if any per-layer key is an array or an interval is given (else the seed's scalar path)."""
    return f"{arch}.{INTERVAL_KEY}" in model_info or any(
        isinstance(model_info.get(f"{arch}.{key}"), list) for key in PER_LAYER_KEYS
    )


def withheld_arrays(model_info: Mapping[str, Any] | None) -> bool:
    """True if ``/api/show`` withheld a per-layer array: Ollama answers long arrays as ``[]`` unless
    asked with ``verbose: true``, so an empty array under the architecture's keys means ask again."""
    if not isinstance(model_info, Mapping):
        return False
    arch = model_info.get("general.architecture")
    return isinstance(arch, str) and any(
        model_info.get(f"{arch}.{key}") == [] for key in (*PER_LAYER_KEYS, INTERVAL_KEY)
    )


def full_attention_mask(raw: object, layers: int) -> LayerValues:
    """1 for layers that keep full-attention KV under ``full_attention_interval``, else 0."""
    number = _number(raw)
    if raw is None:
        return LayerValues(None)
    if number is None or number < 1 or number != int(number):
        return LayerValues(None, f"{INTERVAL_KEY}: {raw!r} is not a positive integer; ignored")
    interval = int(number)
    return LayerValues(tuple(1.0 if (i + 1) % interval == 0 else 0.0 for i in range(layers)))


@dataclass(frozen=True)
class LayerAccount:
    """KV elements cached per token over all layers (None if refused), layers charged, and notes."""

    elements: Fraction | None
    kv_layers: int
    notes: tuple[str, ...] = ()


def layer_elements(model_info: Mapping[str, Any], arch: str, layers: int) -> LayerAccount:
    """Σ over layers of ``head_count_kv[i] × (key_length[i] + value_length[i])`` (K and V elements).

    ``head_count_kv`` falls back to ``head_count``; ``key_length`` to ``embedding_length / head_count``;
    ``value_length`` to ``key_length``; the interval mask zeroes the layers without full attention."""
    get = model_info.get
    kv = per_layer(get(f"{arch}.attention.head_count_kv"), layers, "head_count_kv")
    heads = per_layer(get(f"{arch}.attention.head_count"), layers, "head_count")
    keys = per_layer(get(f"{arch}.attention.key_length"), layers, "key_length")
    values = per_layer(get(f"{arch}.attention.value_length"), layers, "value_length")
    mask = full_attention_mask(get(f"{arch}.{INTERVAL_KEY}"), layers)
    notes = [v.note for v in (kv, heads, keys, values, mask) if v.note]
    kv_heads = kv.values or heads.values
    key_len = keys.values
    if key_len is None:
        embedding = _number(get(f"{arch}.embedding_length"))
        if embedding and embedding > 0 and heads.values and all(h > 0 for h in heads.values):
            key_len = tuple(embedding / h for h in heads.values)
    if kv_heads is None or key_len is None:
        return LayerAccount(None, 0, (*notes, "head counts or key length unknown; refused"))
    value_len = values.values or key_len
    gates = mask.values or (1.0,) * layers
    total, charged = Fraction(0), 0
    for i in range(layers):
        if kv_heads[i] > 0 and gates[i] > 0:
            charged += 1
            total += Fraction(kv_heads[i]) * (Fraction(key_len[i]) + Fraction(value_len[i]))
    if total <= 0:
        return LayerAccount(None, 0, (*notes, "no layer keeps a KV cache; refused"))
    return LayerAccount(total, charged, tuple(notes))
