"""The embedded llama.cpp backend: the judge in-process, exact prompt counts, num_ctx, GGUF model info."""

from __future__ import annotations

import pytest

from nomad_lab.backends import ChatOptions, ChatRequest, collect_stream, open_backend
from nomad_lab.backends.embedded import EmbeddedBackend
from nomad_lab.backends.llama_format import format_gemma_folding_system, truncate_middle
from nomad_lab.backends.llama_models import human_number, metadata_value
from nomad_lab.core.context_window import ContextWindowResolver
from nomad_lab.core.judge_prompt import ON_TOPIC_SCHEMA
from nomad_lab.core.token_estimator import TokenCalibrator
from nomad_lab.services.judge_service import RelevanceJudge

BURN = [
    {
        "text": "For a minor burn, cool the skin under cool running water for about twenty minutes. Do not "
        "use ice, butter or toothpaste. Cover the burn loosely with cling film or a clean bandage."
    },
    {"text": "Large burns, burns to the face, hands or genitals, and chemical burns need emergency care."},
]


def test_metadata_and_labels_without_a_model() -> None:
    assert [metadata_value(v) for v in ("32768", "0.000001", "true", "Gemma 3 270m", "-1")] == [
        32768,
        1e-6,
        True,
        "Gemma 3 270m",
        -1,
    ]
    assert (human_number(268_098_176), human_number(8_030_261_248), human_number(2_000_000)) == (
        "268.10M",
        "8.0B",
        "2M",
    )
    assert truncate_middle(list(range(10)), 6) == [0, 1, 2, 3, 8, 9]
    assert truncate_middle([1, 2], 6) == [1, 2]


def test_gemma_format_keeps_the_system_prompt() -> None:
    """llama-cpp-python's own "gemma" format drops system messages; the judge's instructions must survive."""
    out = format_gemma_folding_system(
        [{"role": "system", "content": "RULES"}, {"role": "user", "content": "Q?"}]
    )
    assert out.prompt == "<start_of_turn>user\nRULES\n\nQ?<end_of_turn>\n<start_of_turn>model\n"


@pytest.fixture(scope="module")
def gemma() -> EmbeddedBackend:
    backend = open_backend("embedded:gemma3-270m?n_ctx=2048")
    assert isinstance(backend, EmbeddedBackend)
    return backend


@pytest.mark.slow
def test_model_info_from_gguf_feeds_the_context_resolver(gemma: EmbeddedBackend) -> None:
    info = gemma.show()
    assert (info.name, info.context_length, info.quantization, info.parameter_size) == (
        "gemma3-270m",
        32768,
        "Q4_K_M",
        "268.10M",
    )
    assert info.model_info["gemma3.attention.key_length"] == 256  # a number, not the string llama.cpp gives
    assert info.modelfile_num_ctx == 2048
    window = ContextWindowResolver(gemma.show, available_bytes=8 * 2**30).resolve("gemma3-270m")
    assert window.tokens == 2048 and window.limited_by == "model"  # the modelfile num_ctx binds


@pytest.mark.slow
def test_judge_in_process_returns_a_boolean_verdict_and_feeds_the_calibrator(gemma: EmbeddedBackend) -> None:
    calibrator = TokenCalibrator(None)
    judge = RelevanceJudge(gemma, calibrator=calibrator)
    result = judge.judge("How should I cool a burn?", BURN)
    assert result.judged and isinstance(result.verdict, bool), result
    assert result.prompt_tokens and result.prompt_tokens > 100
    factor = calibrator.ratio_for("gemma3-270m")
    assert factor != 1.0 and 0.5 <= factor <= 2.5


@pytest.mark.slow
def test_streamed_prompt_count_equals_the_non_streamed_one(gemma: EmbeddedBackend) -> None:
    request = ChatRequest(
        [{"role": "user", "content": "Is water wet? Answer in JSON."}],
        ChatOptions(num_predict=12, temperature=0, format=ON_TOPIC_SCHEMA),
    )
    once = gemma.chat(request)
    chunks = list(gemma.chat_stream(request))
    streamed = collect_stream(chunks)
    assert once.structured and streamed.structured
    # The prompt count is a property of the prompt. The two decodes are not compared: llama.cpp does
    # not promise a greedy decode is identical across prompt-cache states (another batch split changes
    # the float sums), so only each side's own bounds are checked.
    assert streamed.usage.prompt_tokens == once.usage.prompt_tokens > 0
    for result in (once, streamed):
        assert 0 < result.usage.completion_tokens <= 12 and result.content
    assert chunks[-1].done and streamed.usage.source == "llama_cpp:tokenized-prompt"


@pytest.mark.slow
def test_num_ctx_reloads_and_truncates_like_ollama(gemma: EmbeddedBackend) -> None:
    long_text = " ".join(f"word{i}" for i in range(400))
    request = ChatRequest(
        [{"role": "user", "content": long_text}], ChatOptions(num_ctx=256, num_predict=4, temperature=0)
    )
    small = gemma.chat(request)
    assert gemma.loaded_now().n_ctx == 256
    assert small.usage.prompt_tokens <= 256 - 4  # truncated from the middle to fit the window
    full = gemma.chat(ChatRequest(request.messages, ChatOptions(num_predict=4, temperature=0)))
    assert gemma.loaded_now().n_ctx == 2048  # back to the default: reloaded, as Ollama does
    assert full.usage.prompt_tokens > 800


def test_the_prefill_probe_counts_reuse_and_reload_like_the_engine() -> None:
    """The capability a placement study reads: a repeated prompt reuses all but its last token, an
    extended one evaluates only its new tail, ``forget_prefix`` makes the next prompt evaluate in full."""
    from nomad_lab.backends.base import PrefillProbe

    backend = EmbeddedBackend("gemma3-270m", n_ctx=1024)
    assert isinstance(backend, PrefillProbe)
    prompt = backend.render([{"role": "user", "content": BURN[0]["text"]}])
    assert BURN[0]["text"] in prompt
    first = backend.prefill(prompt)
    assert first.reused_tokens == 0 and first.evaluated_tokens == first.prompt_tokens
    again = backend.prefill(prompt)
    assert (again.reused_tokens, again.evaluated_tokens) == (first.prompt_tokens - 1, 1)
    longer = backend.prefill(prompt + BURN[1]["text"])
    assert longer.evaluated_tokens == longer.prompt_tokens - longer.reused_tokens
    assert 0 < longer.evaluated_tokens < longer.prompt_tokens and longer.ms > 0
    backend.forget_prefix()
    cold = backend.prefill(prompt)
    assert cold.reused_tokens == 0 and cold.evaluated_tokens == cold.prompt_tokens
    assert backend.load_ms() > 0


def test_every_evaluation_reports_the_tokens_it_prefilled_to_the_work_log(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The main job's machine-independent work: a cold call prefills its whole prompt, a repeat of the
    same prompt reuses the KV cache and prefills less; each call is one line of the log."""
    from nomad_lab.backends.work_log import WORK_LOG_ENV, read_work_log

    log = tmp_path / "work.jsonl"
    monkeypatch.setenv(WORK_LOG_ENV, str(log))
    backend = EmbeddedBackend("gemma3-270m", n_ctx=1024)
    backend.forget_prefix()
    prompt = backend.render([{"role": "user", "content": BURN[0]["text"]}])
    cold = backend.prefill(prompt)
    first = read_work_log(log)
    assert cold.evaluated_tokens == cold.prompt_tokens and (first.calls, first.prefilled_tokens) == (
        1,
        cold.prompt_tokens,
    )
    warm = backend.prefill(prompt)
    second = read_work_log(log)
    assert second.calls == 2 and second.prefilled_tokens - first.prefilled_tokens == warm.evaluated_tokens
    assert warm.evaluated_tokens < cold.evaluated_tokens
