"""Context-window resolution (SPEC §4): the worked examples, every quirk, and absurd metadata."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from nomad_lab.core.context_window import (
    ContextWindow,
    ContextWindowResolver,
    ModelFacts,
    context_length_from,
    exact_kv_bytes_per_token,
    fallback_kv_bytes_per_token,
    kv_bytes_per_token,
    parse_parameter_billions,
    parse_user_cap,
    resolve_context_window,
)

LLAMA3_8B = {
    "general.architecture": "llama",
    "llama.context_length": 8192,
    "llama.block_count": 32,
    "llama.attention.head_count": 32,
    "llama.attention.head_count_kv": 8,
    "llama.embedding_length": 4096,
}
GEMMA3_270M = {
    "general.architecture": "gemma3",
    "gemma3.context_length": 32768,
    "gemma3.block_count": 18,
    "gemma3.attention.head_count": 4,
    "gemma3.attention.head_count_kv": 1,
    "gemma3.embedding_length": 640,
    "gemma3.attention.key_length": 256,
}
GiB = 1024**3


def test_llama3_8b_costs_128_kib_per_token_from_head_count_kv() -> None:
    assert exact_kv_bytes_per_token(LLAMA3_8B) == 2 * 32 * 8 * 128 * 2 == 128 * 1024


def test_head_count_is_only_a_fallback_for_missing_head_count_kv() -> None:
    info = {k: v for k, v in LLAMA3_8B.items() if k != "llama.attention.head_count_kv"}
    assert exact_kv_bytes_per_token(info) == 4 * 128 * 1024


def test_explicit_key_length_beats_the_embedding_formula() -> None:
    assert exact_kv_bytes_per_token(GEMMA3_270M) == 2 * 18 * 1 * 256 * 2
    info = {k: v for k, v in GEMMA3_270M.items() if k != "gemma3.attention.key_length"}
    assert exact_kv_bytes_per_token(info) == 2 * 18 * 1 * 160 * 2  # the seed's (wrong for gemma3) fallback


def test_cache_types_scale_the_element_size() -> None:
    f16 = exact_kv_bytes_per_token(LLAMA3_8B)
    assert exact_kv_bytes_per_token(LLAMA3_8B, cache_type="q8_0") == f16 // 2 * 34 // 32
    assert exact_kv_bytes_per_token(LLAMA3_8B, cache_type="q4_0") == f16 // 2 * 18 // 32
    with pytest.raises(ValueError, match="unknown KV cache type 'q3'"):
        exact_kv_bytes_per_token(LLAMA3_8B, cache_type="q3")


def test_sliding_window_layers_stop_growing_at_the_window() -> None:
    full = exact_kv_bytes_per_token(GEMMA3_270M)
    swa = exact_kv_bytes_per_token(GEMMA3_270M, context=8192, sliding_window=512, sliding_layers=15)
    assert swa == pytest.approx(full * (3 + 15 * 512 / 8192) / 18, abs=1)


@pytest.mark.parametrize(
    ("billions", "kib"),
    [(0.5, 32), (1.5, 32), (3, 64), (8, 128), (14, 192), (32, 256), (70, 512), (None, 128)],
)
def test_fallback_table(billions: float | None, kib: int) -> None:
    assert fallback_kv_bytes_per_token(billions) == kib * 1024


def test_fallback_is_used_when_metadata_is_incomplete() -> None:
    assert kv_bytes_per_token({"general.architecture": "llama"}, "3.2B") == 64 * 1024
    assert kv_bytes_per_token(None, None, "qwen2.5:14b") == 192 * 1024
    assert kv_bytes_per_token(LLAMA3_8B, "70B") == 128 * 1024


@pytest.mark.parametrize(
    ("size", "name", "billions"),
    [
        ("8.0B", None, 8.0),
        ("270M", "gemma3:270m", None),
        (None, "llama3.2:3b", 3.0),
        (None, "mistral-7b-v2", 7.0),
        (None, "phi3:mini", None),
        ("1.5b", None, 1.5),
        (None, "qwen2.5:0.5b-instruct", 0.5),
        (None, "x-3bit", None),
    ],
)
def test_parameter_billions(size: str | None, name: str | None, billions: float | None) -> None:
    assert parse_parameter_billions(size, name) == billions


@pytest.mark.parametrize(
    ("raw", "cap"),
    [
        (None, None),
        ("auto", None),
        ("abc", None),
        ("2048", None),
        ("8192", 8192),
        (" 16384tokens", 16384),
        (32768, 32768),
        ("4096", 4096),
    ],
)
def test_user_cap(raw: object, cap: int | None) -> None:
    assert parse_user_cap(raw) == cap


def test_context_length_prefers_the_architecture_key() -> None:
    assert context_length_from(LLAMA3_8B) == 8192
    assert context_length_from({"general.architecture": "x", "y.context_length": 4000}) == 4000
    assert (
        context_length_from({"general.architecture": "x", "x.context_length": -1, "z.context_length": "9"})
        is None
    )


def test_no_ceilings_means_the_unknown_backend_default() -> None:
    assert resolve_context_window() == ContextWindow(8192, "default", None)


def test_ladder_snaps_down_to_the_binding_ceiling() -> None:
    assert resolve_context_window(model_max_ctx=131072, user_cap=20000) == ContextWindow(16384, "user")
    assert resolve_context_window(model_max_ctx=40000) == ContextWindow(32768, "model")
    assert resolve_context_window(model_max_ctx=500000) == ContextWindow(131072, "model")


def test_memory_binds_with_weights_sharing_the_pool() -> None:
    kv = 128 * 1024
    window = resolve_context_window(
        model_max_ctx=131072, available_bytes=8 * GiB, model_bytes=4 * GiB, kv_bytes=kv
    )
    affordable = (8 * GiB * 0.8 - 4 * GiB) // kv
    assert window == ContextWindow(16384, "memory", affordable)


def test_floor_beats_a_memory_shortfall_but_never_the_trained_context() -> None:
    starved = resolve_context_window(
        model_max_ctx=8192, available_bytes=GiB, model_bytes=GiB, kv_bytes=128 * 1024
    )
    assert starved == ContextWindow(4096, "floor", 0)
    tinyllama = resolve_context_window(model_max_ctx=2048, available_bytes=64 * GiB, kv_bytes=22528)
    assert (tinyllama.tokens, tinyllama.limited_by) == (2048, "model")
    assert resolve_context_window(modelfile_num_ctx=3000).tokens == 3000


def test_parallel_slots_share_the_memory() -> None:
    one = resolve_context_window(model_max_ctx=131072, available_bytes=16 * GiB, kv_bytes=128 * 1024)
    four = resolve_context_window(
        model_max_ctx=131072, available_bytes=16 * GiB, kv_bytes=128 * 1024, parallel=4
    )
    assert (one.tokens, four.tokens) == (65536, 16384)


@pytest.mark.parametrize("absurd", [-5, 0, float("nan"), float("inf"), "8192", True, 10**400, None, [1]])
def test_absurd_numbers_are_ignored(absurd: object) -> None:
    window = resolve_context_window(model_max_ctx=absurd, available_bytes=absurd, kv_bytes=absurd)  # type: ignore[arg-type]
    assert window == ContextWindow(8192, "default", None)
    info = {**LLAMA3_8B, "llama.block_count": absurd}
    assert exact_kv_bytes_per_token(info) is None


def test_huge_metadata_is_bounded_not_allocated() -> None:
    info = {**LLAMA3_8B, "llama.block_count": 10**12, "llama.context_length": 10**15}
    window = resolve_context_window(
        model_max_ctx=context_length_from(info),
        available_bytes=64 * GiB,
        kv_bytes=exact_kv_bytes_per_token(info),
    )
    assert window == ContextWindow(4096, "floor", 0)


@dataclass
class Show:
    facts: object
    calls: int = 0

    def __call__(self, model: str) -> object:
        self.calls += 1
        if isinstance(self.facts, Exception):
            raise self.facts
        return self.facts


def test_resolver_memoizes_per_model_until_invalidated() -> None:
    show = Show(ModelFacts(context_length=8192, model_info=LLAMA3_8B, parameter_size="8.0B"))
    resolver = ContextWindowResolver(show, available_bytes=64 * GiB)
    assert resolver.resolve("llama3:8b") == ContextWindow(8192, "model", int(64 * GiB * 0.8 // (128 * 1024)))
    resolver.resolve("llama3:8b")
    assert show.calls == 1
    resolver.invalidate("llama3:8b")
    resolver.resolve("llama3:8b")
    assert show.calls == 2


def test_resolver_falls_back_for_non_ollama_backends_and_errors() -> None:
    assert ContextWindowResolver(Show(ModelFacts())).resolve("m") == ContextWindow(8192, "default")
    assert ContextWindowResolver(Show(ModelFacts()), user_cap="16384").resolve("m") == ContextWindow(
        16384, "user"
    )
    assert ContextWindowResolver(Show(OSError("down"))).resolve("m") == ContextWindow(8192, "default")
