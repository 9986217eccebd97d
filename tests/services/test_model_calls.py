"""The one model-call boundary: every chat call is timed, calibrated, labelled on failure and logged.

The scripted backend reports ``ceil(1.25 × uncalibrated estimate)`` prompt tokens (9 completion tokens for a
constrained reply, 12 for an answer), so each logged row's counts are known before the call is made.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from nomad_lab.backends import BackendError, ChatOptions, ChatRequest, ChatResult
from nomad_lab.core.token_estimator import TokenCalibrator, estimate_messages_tokens
from nomad_lab.services.judge_service import RelevanceJudge
from nomad_lab.services.model_calls import CallBuffer, chat_call, request_sha256
from nomad_lab.services.pipeline import PipelineConfig, run_pipeline
from nomad_lab.services.query_rewrite import rewrite_query
from nomad_lab.services.verdict_cache import CachedJudge
from nomad_lab.store import Store
from tests.support.paths import CORPUS
from tests.support.scripted_backend import ScriptedBackend

QUESTION = "How many drops of bleach per gallon of water?"
MESSAGES = [{"role": "user", "content": QUESTION + " Answer briefly, and say which passage you used."}]
CHAT = [
    {"role": "user", "content": "I collect rain water in a barrel for drinking."},
    {"role": "assistant", "content": "Filter it, then disinfect it by boiling or with bleach."},
    {"role": "user", "content": QUESTION},
]
PASSAGES = [{"text": "Add 8 drops of unscented household bleach per gallon of clear water, wait 30 min."}]


class OnTopicJudge(ScriptedBackend):
    """The scripted model replying as a judge that finds the passages on topic (same usage)."""

    def chat(self, request: ChatRequest) -> ChatResult:
        return dataclasses.replace(super().chat(request), content='{"on_topic": true}')


def real_prompt_tokens(messages: list[dict[str, str]]) -> int:
    """What the scripted backend reports for these messages."""
    return math.ceil(1.25 * estimate_messages_tokens(messages, 1.0))


def test_a_call_is_logged_with_its_tokens_and_feeds_the_calibrator() -> None:
    backend, log, calibrator = ScriptedBackend(), CallBuffer(), TokenCalibrator(None)
    request = ChatRequest(MESSAGES, ChatOptions(num_predict=64, temperature=0))
    result = chat_call(backend, request, purpose="answer", calibrator=calibrator, sink=log)
    assert [(c.model, c.purpose, c.ok, c.failure) for c in log] == [("scripted:1.5b", "answer", True, None)]
    call = log[0]
    assert (call.prompt_tokens, call.completion_tokens) == (real_prompt_tokens(MESSAGES), 12)
    assert call.prompt_tokens == result.usage.prompt_tokens and call.ms > 0
    assert call.request_sha256 == request_sha256("scripted:1.5b", request)
    # the calibrator saw real / uncalibrated-estimate of exactly these messages
    assert calibrator.ratio_for("scripted:1.5b") == pytest.approx(
        call.prompt_tokens / estimate_messages_tokens(MESSAGES, 1.0), rel=0.02
    )


def test_the_request_hash_covers_model_messages_and_every_option() -> None:
    request = ChatRequest(MESSAGES, ChatOptions(num_predict=64, temperature=0))
    same = ChatRequest([dict(m) for m in MESSAGES], ChatOptions(num_predict=64, temperature=0))
    assert request_sha256("m", request) == request_sha256("m", same)
    assert request_sha256("m", request) != request_sha256("other", request)
    assert request_sha256("m", request) != request_sha256(
        "m", ChatRequest(MESSAGES, ChatOptions(num_predict=64, temperature=0, seed=1))
    )
    assert request_sha256("m", request) != request_sha256("m", ChatRequest(MESSAGES[:0], request.options))


def test_a_failed_call_is_logged_with_its_reason_and_re_raised() -> None:
    backend = ScriptedBackend(fail=lambda request, n: BackendError("http-500", "boom"))
    log = CallBuffer()
    with pytest.raises(BackendError, match="http-500"):
        chat_call(backend, ChatRequest(MESSAGES), purpose="answer", sink=log)
    assert [(c.ok, c.failure, c.prompt_tokens, c.completion_tokens) for c in log] == [
        (False, "http-500", None, None)
    ]
    interrupted = ScriptedBackend(fail=lambda request, n: KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):  # the user stopping the run is not a model failure
        chat_call(interrupted, ChatRequest(MESSAGES), purpose="answer", sink=log)
    assert len(log) == 1


def test_judge_and_rewrite_log_their_calls_and_still_fail_open() -> None:
    log = CallBuffer()
    judged = RelevanceJudge(OnTopicJudge(), thinking_capable=False, sink=log).judge(QUESTION, PASSAGES)
    rewrite = rewrite_query(ScriptedBackend(), None, CHAT, sink=log)
    judge_messages = RelevanceJudge(ScriptedBackend()).messages(QUESTION, PASSAGES)
    assert [c.purpose for c in log] == ["judge", "rewrite"]
    assert (log[0].prompt_tokens, log[0].completion_tokens) == (real_prompt_tokens(judge_messages), 9)
    assert (
        log[0].prompt_tokens == judged.prompt_tokens and log[1].prompt_tokens == rewrite.usage.prompt_tokens
    )
    broken = ScriptedBackend(fail=lambda request, n: TimeoutError())
    failed = RelevanceJudge(broken, thinking_capable=False, sink=log).judge(QUESTION, PASSAGES)
    assert (failed.judged, failed.reason) == (False, "timeout") and (log[-1].ok, log[-1].failure) == (
        False,
        "timeout",
    )
    assert RelevanceJudge(broken, sink=log).judge(QUESTION, []).reason == "no-chunks" and len(log) == 3


@pytest.mark.slow  # a real fixture index, embedded with MiniLM
def test_a_pipeline_turn_logs_rewrite_judge_and_answer_in_the_store(tmp_path: Path, embedder) -> None:
    """One real store: the turn's three calls, in order, each with the tokens its backend reported."""
    from nomad_lab.data.corpus import load_corpus
    from nomad_lab.retrieval.index import build_index

    backend, judge = ScriptedBackend(), OnTopicJudge()
    with Store(tmp_path / "s.duckdb") as store:
        index, _ = build_index(load_corpus(CORPUS), store, embedder, progress=False)
        config = PipelineConfig(
            backend=backend,
            index=index,
            relevance_check_model="scripted:1.5b",
            judge_backend=judge,
            call_log=store,
        )
        result = run_pipeline(CHAT, config)
        calls = store.model_calls()
        totals = store.model_call_totals()
    assert result.trace.relevance_check_judged is True  # the judge was really asked
    assert [c.purpose for c in calls] == ["rewrite", "judge", "answer"]
    rewrite_sent, answer_sent = backend.requests
    assert [c.prompt_tokens for c in calls] == [
        real_prompt_tokens(rewrite_sent.messages),
        real_prompt_tokens(judge.requests[0].messages),
        real_prompt_tokens(result.trace.messages),
    ]
    assert [c.completion_tokens for c in calls] == [9, 9, 12]
    assert calls[2].request_sha256 == request_sha256("scripted:1.5b", answer_sent)
    assert {(t["purpose"], t["calls"], t["failures"]) for t in totals} == {
        ("rewrite", 1, 0),
        ("judge", 1, 0),
        ("answer", 1, 0),
    }


def test_the_verdict_cache_logs_only_the_calls_it_makes(tmp_path: Path) -> None:
    from nomad_lab.gate.reference_ranking import Candidate

    chunks = [Candidate(PASSAGES[0]["text"], 0.9, doc_id="bleach")]
    with Store(tmp_path / "s.duckdb") as store:
        cached = CachedJudge("scripted:1.5b", store, backend=OnTopicJudge())
        cached(QUESTION, chunks)
        cached(QUESTION, chunks)  # a cache hit: no model call, no row
        calls = store.model_calls(purpose="judge")
    assert cached.cache_hits == 1 and len(calls) == 1 and calls[0].prompt_tokens is not None
