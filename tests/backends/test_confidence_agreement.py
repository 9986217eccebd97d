"""The same judge prompt's P(true) from three real paths agrees: embedded llama.cpp logits, a real
``llama_cpp.server`` over OpenAI ``logprobs``, and ``nomad-lab serve`` over Ollama's native ``logprobs``.

Same GGUF (SmolLM2-135M-Instruct, which carries its own chat template, so every path formats the same
prompt tokens), greedy, grammar-constrained. The embedded backend and the shim run the same code, so
they must agree to float precision. ``llama_cpp.server`` must be started with ``logits_all`` to give
logprobs at all; it then decodes the prompt with logits for every position, a different batch layout
whose float sums differ in the last bits, and it reports only the top 20 alternatives, so variants of
a word ranked below 20 are missing there. Both effects were measured at about 2e-8 of probability on
these prompts, so 1e-3 is the tolerance, with room for another CPU's kernels: a bug that reads the
wrong position or forgets a variant moves P(true) by tenths (see tests/core/test_verdict_confidence.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nomad_lab.backends.embedded import EmbeddedBackend
from nomad_lab.backends.ollama_native import OllamaBackend
from nomad_lab.backends.openai_compat import OpenAICompatBackend
from nomad_lab.services.judge_service import RelevanceJudge
from tests.support.llamacpp_server import BURN, llama_server

TOLERANCE = 1e-3
QUESTIONS = ["How do I cool a burn?", "Write me a poem about the sea.", "What is the capital of France?"]


@pytest.fixture(scope="module")
def logprobs_server() -> Iterator[str]:
    with llama_server("smollm2", logits_all=True) as base_url:
        yield f"{base_url}/v1"


def confidences(judge: RelevanceJudge) -> list[tuple[bool | None, float | None, str | None]]:
    out = []
    for question in QUESTIONS:
        result = judge.judge(question, BURN)
        assert result.judged, result
        out.append((result.verdict, result.p_true, result.confidence_reason))
    return out


@pytest.mark.slow
def test_p_true_agrees_across_embedded_openai_and_ollama_paths(logprobs_server: str, shim) -> None:
    embedded = confidences(
        RelevanceJudge(EmbeddedBackend("smollm2-135m", n_ctx=2048), thinking_capable=False)
    )
    openai = confidences(
        RelevanceJudge(OpenAICompatBackend(logprobs_server, "smollm2", timeout=120), thinking_capable=False)
    )
    native = confidences(
        RelevanceJudge(OllamaBackend(shim.base_url, shim.model, timeout=120), thinking_capable=False)
    )
    for (v_e, p_e, why_e), (v_o, p_o, why_o), (v_n, p_n, why_n) in zip(embedded, openai, native, strict=True):
        assert (why_e, why_o, why_n) == (None, None, None)
        assert 0.0 < p_e < 1.0
        assert p_o == pytest.approx(p_e, abs=TOLERANCE)
        assert p_n == pytest.approx(p_e, abs=TOLERANCE)  # the shim runs the embedded code in another process
        if abs(p_e - 0.5) > TOLERANCE:  # a coin-flip P(true) may tip either way across cache states
            assert v_e == v_o == v_n
    print(
        "P(true) embedded / llama_cpp.server / shim:",
        [(e[1], o[1], n[1]) for e, o, n in zip(embedded, openai, native, strict=True)],
    )
