"""The pipeline as one function (SPEC §5): mock and scripted models over a real fixture index, and one real
SmolLM2 call at a window so small the planner must drop chunks and turns."""

from __future__ import annotations

import dataclasses

import pytest

from nomad_lab.core.planner import ELISION_MARKER
from nomad_lab.core.prompts import DEFAULT_SYSTEM_PROMPT, SUFFICIENCY_NOTE
from nomad_lab.core.token_estimator import TokenCalibrator, estimate_messages_tokens
from nomad_lab.data.corpus import load_corpus
from nomad_lab.services.pipeline import (
    MOCK_EMPTY_ANSWER,
    PipelineConfig,
    context_limits_for,
    run_pipeline,
    split_messages,
)
from nomad_lab.store import Store
from tests.support.paths import FIXTURES
from tests.support.scripted_backend import ScriptedBackend

pytestmark = pytest.mark.slow  # the fixture index embeds with MiniLM

CORPUS = FIXTURES / "retrieval" / "corpus"
REFERENCE_TRACE_FIELDS = {
    "rewrittenQuery",
    "didRewrite",
    "retrieved",
    "injected",
    "messages",
    "numCtx",
    "numPredict",
    "contextLimits",
    "timings",
    "minFinalScore",
    "chunksBelowFloor",
    "relevanceCheckModel",
    "chunksRejectedByCheck",
    "budget",
    "uncalibratedPromptTokens",
}
CHAT = [
    {"role": "user", "content": "I collect rain water in a barrel for drinking."},
    {"role": "assistant", "content": "Filter it, then disinfect it by boiling or with bleach."},
    {"role": "user", "content": "How many drops of bleach per gallon of water?"},
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory):
    from nomad_lab.retrieval.embedding import load_embedder
    from nomad_lab.retrieval.index import build_index

    with Store(tmp_path_factory.mktemp("pipeline") / "s.duckdb") as store:
        built, _ = build_index(load_corpus(CORPUS), store, load_embedder(), progress=False)
    return built


def test_mock_end_to_end_trace(index) -> None:
    result = run_pipeline(CHAT, PipelineConfig(model="mock", index=index))
    trace, ref = result.trace, result.trace.to_reference()
    assert set(ref) >= REFERENCE_TRACE_FIELDS and ref["budget"] == trace.budget.to_reference()
    assert set(ref["timings"]) == {"rewriteMs", "retrievalMs", "relevanceCheckMs"}
    # mock: no rewrite, the raw last user message retrieves
    assert (trace.did_rewrite, trace.rewritten_query, trace.rewrite_reason) == (
        False,
        CHAT[-1]["content"],
        "skipped",
    )
    assert trace.timings.rewrite_ms == 0 and trace.timings.retrieval_ms > 0
    searched = index.search(CHAT[-1]["content"], 5, 0.3, 0.62)
    assert trace.retrieved_doc_ids == [c.doc_id for c in searched.chunks]
    assert trace.retrieved_doc_ids[0] == "water-bleach"
    assert trace.chunks_below_floor == searched.floor.below_floor and trace.min_final_score == 0.62
    assert (trace.relevance_check_model, trace.chunks_rejected_by_check) == (None, 0)
    # no backend: the model-size tier defaults to 8B and the window to 8192
    assert ref["contextLimits"] == {"maxResults": 4, "maxTokens": 2500}
    assert (trace.num_ctx, trace.context_window_source, trace.budget.context_window) == (
        8192,
        "default",
        8192,
    )
    assert trace.num_predict == trace.budget.num_predict
    assert trace.injected == trace.retrieved[: trace.budget.chunks_kept]
    assert result.answer.content == "\n\n".join(c["text"] for c in trace.injected)
    assert trace.uncalibrated_prompt_tokens == estimate_messages_tokens(trace.messages)
    roles = [m["role"] for m in trace.messages]
    assert roles == ["system", "user", "assistant", "system", "user"]  # tail: the RAG block behind history
    assert trace.messages[0]["content"] == DEFAULT_SYSTEM_PROMPT
    assert (
        "[Knowledge Base Context]" in trace.messages[3]["content"]
        and "[Context 1]\n" in trace.messages[3]["content"]
    )
    front = run_pipeline(CHAT, PipelineConfig(model="mock", index=index, rag_placement="front")).trace
    assert [m["role"] for m in front.messages] == ["system", "system", "user", "assistant", "user"]


def test_the_floor_and_a_tiny_window(index) -> None:
    floored = run_pipeline(CHAT, PipelineConfig(model="mock", index=index, min_final_score=0.99))
    assert floored.trace.retrieved == [] and floored.trace.chunks_below_floor > 0
    assert floored.answer.content == MOCK_EMPTY_ANSWER
    assert [m["role"] for m in floored.trace.messages] == ["system", "user", "assistant", "user"]  # no block

    history = [
        m
        for i in range(6)
        for m in (
            {"role": "user", "content": f"turn {i} " + "word " * 60},
            {"role": "assistant", "content": "noted " * 60},
        )
    ]
    tiny = run_pipeline(
        [*history, CHAT[-1]], PipelineConfig(model="mock", index=index, min_final_score=0, context_window=900)
    ).trace
    assert (
        tiny.budget.turns_dropped >= 4 and tiny.budget.turns_dropped % 4 == 0 and tiny.budget.history_elided
    )
    assert tiny.budget.chunks_dropped >= 1 and tiny.injected == []
    assert tiny.messages[1] == {"role": "system", "content": ELISION_MARKER}
    assert tiny.num_ctx == 900 and tiny.context_window_source == "explicit"


def test_override_bypasses_rewrite_and_retrieval(index) -> None:
    oracle = [
        {"text": "Boil for three minutes above 2,000 m.", "score": 1, "metadata": {"doc_id": "water-boiling"}}
    ]
    result = run_pipeline(CHAT, PipelineConfig(model="mock", index=index), context_override=oracle)
    assert result.trace.rewritten_query is None and result.trace.timings.retrieval_ms == 0
    assert result.trace.injected_doc_ids == ["water-boiling"] and result.answer.content == oracle[0]["text"]
    empty = run_pipeline(CHAT, PipelineConfig(model="mock", index=index), context_override=[])
    assert empty.answer.content == MOCK_EMPTY_ANSWER and empty.trace.injected == []


def test_injected_is_a_prefix_unless_asked_for_the_planned_chunks() -> None:
    """SPEC §5.4 quirk: ``injected`` = the first ``chunksKept`` candidates, even when the planner skipped a
    chunk that did not fit and kept a later one; ``injected_as_planned`` records what was really sent."""
    huge = {"text": "word " * 3000, "metadata": {"doc_id": "huge"}}
    small = {"text": "Boil for three minutes.", "metadata": {"doc_id": "small"}}
    quirk = run_pipeline(
        CHAT, PipelineConfig(model="mock", context_window=2048), context_override=[huge, small]
    )
    assert quirk.trace.budget.chunks_kept == 1 and quirk.trace.injected_doc_ids == ["huge"]
    assert "Boil for three minutes." in quirk.trace.messages[-2]["content"]  # what the model really saw
    planned = run_pipeline(
        CHAT,
        PipelineConfig(model="mock", context_window=2048, injected_as_planned=True),
        context_override=[huge, small],
    )
    assert planned.trace.injected_doc_ids == ["small"] and planned.answer.content == small["text"]


def test_scripted_model_rewrite_tier_window_chat_options_and_calibration(index) -> None:
    backend = ScriptedBackend(parameter_size="1.5B", context_length=8192)
    calibrator = TokenCalibrator(None)
    config = PipelineConfig(
        backend=backend, index=index, calibrator=calibrator, seed=42, sampling={"temperature": 0.0}
    )
    first = run_pipeline(CHAT, config)
    trace = first.trace
    assert (trace.did_rewrite, trace.rewritten_query) == (True, "bleach drops per gallon")
    assert trace.tasks_model == "scripted:1.5b" and trace.timings.rewrite_ms > 0
    rewrite_call = backend.requests[0]
    assert rewrite_call.options.format is not None and rewrite_call.options.num_predict == 160
    assert trace.context_limits.max_results == 2 and len(trace.injected) <= 2  # ≤3B tier
    assert (trace.num_ctx, trace.context_window_source) == (8192, "model")
    sent = backend.chat_requests[-1]
    assert sent.messages == trace.messages
    assert (sent.options.num_ctx, sent.options.num_predict) == (8192, trace.budget.num_predict)
    assert (sent.options.temperature, sent.options.seed, sent.options.think) == (0.0, 42, False)
    # the calibrator learned k = real / uncalibrated estimate of the exact messages sent (≈ 1.25 here)
    assert calibrator.ratio_for("scripted:1.5b") == pytest.approx(
        first.answer.usage.prompt_tokens / trace.uncalibrated_prompt_tokens, rel=0.02
    )
    second = run_pipeline(CHAT, config)
    assert second.trace.token_ratio == pytest.approx(1.25, rel=0.02)  # the planner used the learned k
    assert backend.show_calls == 1  # show() and the window are resolved once per model
    single = run_pipeline(CHAT[-1:], config).trace
    assert (single.did_rewrite, single.rewrite_reason) == (False, "single-turn")


def test_relevance_check_when_enabled(index) -> None:
    judge = ScriptedBackend()
    judge.chat = lambda request: dataclasses.replace(  # type: ignore[method-assign]
        ScriptedBackend.chat(judge, request), content='{"on_topic": false}'
    )
    config = PipelineConfig(
        model="mock", index=index, relevance_check_model="scripted:1.5b", judge_backend=judge
    )
    trace = run_pipeline(CHAT, config).trace
    assert trace.relevance_check_model == "scripted:1.5b" and trace.relevance_check_judged is True
    assert trace.chunks_rejected_by_check > 0 and trace.retrieved == [] and trace.injected == []
    assert trace.timings.relevance_check_ms > 0
    assert run_pipeline(CHAT, PipelineConfig(model="mock", index=index)).trace.timings.relevance_check_ms == 0


def test_sufficiency_check_notes_or_drops_what_it_finds_unstated(index) -> None:
    asked = []

    def says(stated: bool):
        def check(query, passages):
            asked.append((query, len(passages)))
            return stated

        return check

    def rag_text(trace) -> str:
        return "\n".join(str(m["content"]) for m in trace.messages if m["role"] == "system")

    stated = run_pipeline(CHAT, PipelineConfig(model="mock", index=index, sufficiency_check=says(True))).trace
    assert stated.sufficiency == "stated" and stated.injected and SUFFICIENCY_NOTE not in rag_text(stated)
    assert asked[0][0] == CHAT[-1]["content"] and asked[0][1] == len(stated.retrieved)
    noted = run_pipeline(CHAT, PipelineConfig(model="mock", index=index, sufficiency_check=says(False))).trace
    assert noted.sufficiency == "note" and noted.injected and SUFFICIENCY_NOTE in rag_text(noted)
    drop = PipelineConfig(model="mock", index=index, sufficiency_check=says(False), sufficiency_action="drop")
    dropped = run_pipeline(CHAT, drop).trace
    assert dropped.sufficiency == "dropped" and dropped.injected == [] and dropped.retrieved == []
    off = run_pipeline(CHAT, PipelineConfig(model="mock", index=index)).trace
    assert off.sufficiency is None and len(asked) == 3
    with pytest.raises(ValueError, match="sufficiency_action must be one of note, drop"):
        PipelineConfig(model="mock", sufficiency_action="hide")


def test_given_passages_get_the_same_sufficiency_decision() -> None:
    """An oracle or a stored run's passages (``context_override``) are checked like retrieved ones."""
    given = [{"text": "The kit weighs 410 grams.", "score": 1.0}]
    asked = []

    def unstated(query, passages):
        asked.append((query, list(passages)))
        return False

    noted = run_pipeline(
        CHAT, PipelineConfig(model="mock", sufficiency_check=unstated), context_override=given
    ).trace
    system = "\n".join(str(m["content"]) for m in noted.messages if m["role"] == "system")
    assert noted.sufficiency == "note" and SUFFICIENCY_NOTE in system and "410 grams" in system
    assert asked == [(CHAT[-1]["content"], ["The kit weighs 410 grams."])]
    drop = PipelineConfig(model="mock", sufficiency_check=unstated, sufficiency_action="drop")
    dropped = run_pipeline(CHAT, drop, context_override=given).trace
    assert dropped.sufficiency == "dropped" and dropped.injected == []
    nothing = run_pipeline(CHAT, drop, context_override=[]).trace
    assert nothing.sufficiency is None and len(asked) == 2  # no passages: nothing to check


def test_inputs_and_tiers() -> None:
    system, history, query = split_messages(
        [{"role": "system", "content": "S"}, *CHAT, {"role": "assistant", "content": "dropped"}]
    )
    assert system == [{"role": "system", "content": "S"}] and history == CHAT[:2] and query == CHAT[2]
    with pytest.raises(ValueError, match="no user message"):
        split_messages([{"role": "assistant", "content": "hi"}])
    with pytest.raises(ValueError, match="needs a backend"):
        PipelineConfig(model="llama3:8b")
    assert context_limits_for("8.0B", None).max_results == 4
    assert context_limits_for(None, "qwen2.5:14b").max_results == 5
    assert context_limits_for("1.2B", None).max_results == 2
    assert context_limits_for("134.52M", "smollm2-135m").max_results == 4  # the reference's quirk: 8B
    assert context_limits_for("134.52M", "smollm2-135m", read_millions=True).max_results == 2


def test_real_smollm2_at_a_tiny_window(index) -> None:
    """The embedded model serves the pipeline: the window comes from its show() (modelfile num_ctx 1024),
    the planner drops turns and chunks to fit, and the real prompt count feeds the calibrator. (The rewrite
    is skipped here: SmolLM2-135M's grammar-constrained rewrites are often junk such as "<query>", which
    would make the retrieved set, and so this test, depend on the model's mood.)"""
    from nomad_lab.backends import open_backend

    backend = open_backend("embedded:smollm2-135m?n_ctx=1024")
    history = [
        m
        for i in range(5)
        for m in (
            {"role": "user", "content": f"Question {i}: " + "tell me more " * 25},
            {"role": "assistant", "content": "Here is more. " * 25},
        )
    ]
    question = {
        "role": "user",
        "content": "How long should I boil water, and how many drops of bleach per gallon?",
    }
    calibrator = TokenCalibrator(None)
    config = PipelineConfig(
        backend=backend,
        index=index,
        min_final_score=0,
        calibrator=calibrator,
        skip_query_rewrite=True,
        sampling={"temperature": 0.0},
        seed=42,
        num_predict_cap=24,
    )
    result = run_pipeline([*history, question], config)
    trace, usage = result.trace, result.answer.usage
    assert (trace.num_ctx, trace.context_window_source) == (1024, "model")
    assert trace.budget.turns_dropped >= 4 and trace.budget.history_elided
    assert len(trace.retrieved) >= 2 and trace.context_limits.max_results == 4  # 135M reads as 8B (quirk)
    assert trace.budget.chunks_dropped >= 1 and len(trace.injected) == trace.budget.chunks_kept
    assert trace.num_predict == 24 < trace.budget.num_predict
    assert usage.source == "llama_cpp:tokenized-prompt" and 0 < usage.prompt_tokens <= 1024
    assert usage.completion_tokens <= 24 and result.answer.content.strip()
    assert calibrator.ratio_for("smollm2-135m") == pytest.approx(
        usage.prompt_tokens / trace.uncalibrated_prompt_tokens, rel=1e-6
    )
