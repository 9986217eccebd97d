"""The OpenAI-compatible transport against a real ``python -m llama_cpp.server`` (llama-cpp-python).

That server has three quirks the backend must handle (FEASIBILITY §5): it never streams usage
(``stream_options`` is not in its request model), it answers the OpenAI ``json_schema`` response
format with HTTP 500 (only ``json_object`` + ``schema`` constrains), and it defaults to
``logits_all=True`` (2–3× slower prefill), hence ``--logits_all false``.
SmolLM2-135M-Instruct is used because it carries a chat template; with gemma3-270m the server's
``--chat_format gemma`` silently drops the judge's system prompt.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nomad_lab.backends import ChatOptions, ChatRequest, collect_stream, open_backend
from nomad_lab.backends.openai_compat import OpenAICompatBackend
from nomad_lab.core.token_estimator import TokenCalibrator
from nomad_lab.services.judge_service import RelevanceJudge
from tests.support.llamacpp_server import BURN, llama_server

MODEL = "smollm2"
QUESTIONS = ["How do I cool a burn?", "Should I put butter on a burn?", "What is the capital of France?"]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with llama_server(MODEL, logits_all=False) as base_url:
        yield f"openai://{base_url.removeprefix('http://')}/v1/{MODEL}?timeout=120"


@pytest.mark.slow
def test_stream_without_usage_recovers_the_prompt_count(server: str) -> None:
    backend = open_backend(server)
    request = ChatRequest(
        [{"role": "user", "content": "Name three colours."}],
        ChatOptions(num_predict=10, temperature=0, seed=1),
    )
    once = backend.chat(request)
    chunks = list(backend.chat_stream(request))
    streamed = collect_stream(chunks)
    assert len(chunks) >= 3 and chunks[-1].done  # it really streamed
    assert once.usage.source == "openai:usage"
    assert "non-stream-recount" in streamed.usage.source  # the server sent no usage in the stream
    assert streamed.usage.prompt_tokens == once.usage.prompt_tokens > 0
    # Not compared with the non-streamed text: two greedy decodes may differ across the server's
    # prompt-cache states. What must hold is that the stream carried the whole (non-empty) answer.
    assert streamed.content.strip() and 0 < streamed.usage.completion_tokens <= 10  # counted from the deltas


@pytest.mark.slow
def test_judge_verdict_is_boolean_under_the_schema(server: str) -> None:
    backend = open_backend(server)
    assert isinstance(backend, OpenAICompatBackend)
    assert backend.effective_format_mode() == "json_object"  # detected llama-cpp-python's server
    auto = open_backend(server.replace("openai://", "auto://").replace("/v1/", "/"))
    assert isinstance(auto, OpenAICompatBackend)  # GET /api/tags is a 404 there: not native (SPEC §7.1)
    result = RelevanceJudge(backend).judge(QUESTIONS[0], BURN)
    assert result.judged and isinstance(result.verdict, bool), result


@pytest.mark.slow
def test_openai_json_schema_form_is_rejected_and_the_judge_fails_open(server: str) -> None:
    forced = open_backend(server + "&format=json_schema")
    result = RelevanceJudge(forced).judge(QUESTIONS[0], BURN)
    assert (result.judged, result.reason, result.kept) == (False, "http-500", BURN)


@pytest.mark.slow
def test_calibrator_learns_a_factor_from_real_counts(server: str) -> None:
    calibrator = TokenCalibrator(None)
    judge = RelevanceJudge(open_backend(server), calibrator=calibrator)
    for question in QUESTIONS:
        assert judge.judge(question, BURN).prompt_tokens
    factor = calibrator.ratio_for(MODEL)
    assert factor != 1.0 and 0.5 <= factor <= 2.5
