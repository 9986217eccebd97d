"""Per-layer KV accounting: only layers that keep a cache are charged; absurd metadata is bounded."""

from __future__ import annotations

import pytest

from nomad_lab.core.context_window import (
    fallback_kv_bytes_per_token,
    kv_account,
    kv_bytes_per_token,
    resolve_context_window,
    seed_kv_bytes_per_token,
)
from nomad_lab.core.kv_layers import per_layer, withheld_arrays

DENSE = {
    "general.architecture": "llama",
    "llama.block_count": 32,
    "llama.attention.head_count": 32,
    "llama.attention.head_count_kv": 8,
    "llama.embedding_length": 4096,
}
# 8 layers, attention (2 KV heads) in layers 3 and 7 only, the rest recurrent.
HYBRID = {
    "general.architecture": "hyb",
    "hyb.block_count": 8,
    "hyb.attention.head_count": 16,
    "hyb.attention.head_count_kv": [0, 0, 0, 2, 0, 0, 0, 2],
    "hyb.attention.key_length": 128,
}
INTERVAL = {
    "general.architecture": "q3n",
    "q3n.block_count": 48,
    "q3n.attention.head_count": 16,
    "q3n.attention.head_count_kv": 2,
    "q3n.attention.key_length": 256,
    "q3n.attention.value_length": 256,
    "q3n.full_attention_interval": 4,
}


def test_scalar_metadata_takes_the_seed_formula_unchanged() -> None:
    account = kv_account(DENSE)
    assert account.method == "scalar"
    assert account.bytes_per_token == seed_kv_bytes_per_token(DENSE) == 2 * 32 * 8 * 128 * 2


def test_per_layer_array_charges_only_layers_with_kv_heads() -> None:
    account = kv_account(HYBRID)
    assert (account.method, account.kv_layers) == ("per-layer", 2)
    assert account.bytes_per_token == 2 * 2 * (128 + 128) * 2
    # The seed reads no scalar there, falls back to head_count and charges all 8 layers.
    assert seed_kv_bytes_per_token(HYBRID) == 2 * 8 * 16 * 128 * 2
    assert seed_kv_bytes_per_token(HYBRID) // account.bytes_per_token == 32


def test_interval_keeps_kv_every_nth_layer_only() -> None:
    account = kv_account(INTERVAL)
    assert account.kv_layers == 12  # layers 3, 7, ..., 47
    assert account.bytes_per_token == 12 * 2 * (256 + 256) * 2
    assert kv_account(INTERVAL, cache_type="q8_0").bytes_per_token == 12 * 2 * 512 * 34 // 32


def test_per_layer_key_and_value_lengths_are_charged_separately() -> None:
    info = {**HYBRID, "hyb.attention.key_length": [64] * 4 + [192] * 4, "hyb.attention.value_length": 96}
    assert kv_account(info).bytes_per_token == (2 * (64 + 96) + 2 * (192 + 96)) * 2


def test_array_longer_than_block_count_is_cut_with_a_note() -> None:
    account = kv_account({**HYBRID, "hyb.attention.head_count_kv": [0, 0, 0, 2, 0, 0, 0, 2, 8, 8]})
    assert account.bytes_per_token == kv_account(HYBRID).bytes_per_token
    assert any("10 entries for 8 layers; extra entries ignored" in note for note in account.notes)


@pytest.mark.parametrize(
    ("array", "reason"),
    [([0, 2, 0, 2], "4 entries for 8 layers; refused"), ([2, -2, 2, 2, 2, 2, 2, 2], "negative entry")],
)
def test_short_or_negative_arrays_are_refused_and_every_layer_is_charged(array: list, reason: str) -> None:
    account = kv_account({**HYBRID, "hyb.attention.head_count_kv": array})
    assert account.bytes_per_token == 8 * 16 * 256 * 2  # head_count on every layer: the safe side
    assert any(reason in note for note in account.notes)


@pytest.mark.parametrize("interval", [0, -4, 2.5, "4"])
def test_a_non_positive_or_non_integer_interval_is_ignored(interval: object) -> None:
    account = kv_account({**INTERVAL, "q3n.full_attention_interval": interval})
    assert account.kv_layers == 48
    assert any("not a positive integer; ignored" in note for note in account.notes)


@pytest.mark.parametrize(
    "info",
    [
        {**HYBRID, "hyb.attention.head_count_kv": [0] * 8, "hyb.attention.head_count": 0},
        {**INTERVAL, "q3n.full_attention_interval": 64},  # longer than the model: no layer keeps KV
        {**INTERVAL, "q3n.block_count": 10**12},
    ],
)
def test_metadata_leaving_no_kv_falls_back_to_the_size_table_never_zero(info: dict) -> None:
    assert kv_account(info).bytes_per_token is None
    kv = kv_bytes_per_token(info, "3B")
    assert kv == fallback_kv_bytes_per_token(3.0) > 0
    window = resolve_context_window(model_max_ctx=32768, available_bytes=8 * 2**30, kv_bytes=kv)
    assert window.tokens >= 4096


def test_per_layer_reader_bounds() -> None:
    assert per_layer(3, 4, "x").values == (3.0,) * 4
    assert per_layer([1, "a"], 2, "x").values is None
    assert per_layer(-1, 2, "x").values is None


def test_withheld_arrays_are_recognized_by_the_empty_list_ollama_sends() -> None:
    assert withheld_arrays({**HYBRID, "hyb.attention.head_count_kv": []})
    assert not withheld_arrays(HYBRID)
    assert not withheld_arrays({**DENSE, "tokenizer.ggml.scores": []})
    assert not withheld_arrays(None)
