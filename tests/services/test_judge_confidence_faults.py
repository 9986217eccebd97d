"""Bad confidence input on both transports: the verdict stands, P(true) is null, the reason is counted."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from nomad_lab.backends import open_backend
from nomad_lab.core.verdict_confidence import MALFORMED, NO_DECISION, NO_LOGPROBS
from nomad_lab.gate.reference_ranking import Candidate
from nomad_lab.services.judge_service import LOGPROBS_REFUSED, JudgeStats, RelevanceJudge
from nomad_lab.services.verdict_cache import CachedJudge, judge_passages_and_key
from nomad_lab.store import Store, Verdict
from tests.support.fake_ollama import FakeServer, ollama_reply

PASSAGES = [{"text": "Cool a burn under running water for twenty minutes."}]
QUESTION = "How do I treat a burn?"
GOOD = [
    {"token": '{"on_topic":', "logprob": -0.1, "top_logprobs": []},
    {
        "token": " false",
        "logprob": math.log(0.75),
        "top_logprobs": [{"token": " true", "logprob": math.log(0.25)}],
    },
    {"token": "}", "logprob": -0.01, "top_logprobs": []},
]
SPECS = ["ollama://127.0.0.1:{port}/m", "openai://127.0.0.1:{port}/v1/m"]


@pytest.mark.parametrize("spec", SPECS)
def test_good_logprobs_give_p_true_beside_the_verdict(spec: str) -> None:
    with FakeServer(ollama_reply('{"on_topic": false}', GOOD)) as server:
        result = RelevanceJudge(open_backend(spec.format(port=server.port)), thinking_capable=False).judge(
            QUESTION, PASSAGES
        )
    assert result.judged and result.verdict is False
    assert result.p_true == pytest.approx(0.25) and result.confidence_reason is None


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize(
    ("logprobs", "reason"),
    [
        (None, NO_LOGPROBS),
        ([{"token": '{"on_topic": false}', "logprob": "NaN?", "top_logprobs": []}], MALFORMED),
        ({"not": "a list"}, MALFORMED),
        ([{"token": "sure", "logprob": -0.1, "top_logprobs": []}], NO_DECISION),
    ],
)
def test_bad_logprobs_leave_the_verdict_and_count_the_reason(
    spec: str, logprobs: object, reason: str
) -> None:
    stats = JudgeStats("m")
    with FakeServer(ollama_reply('{"on_topic": true}', logprobs)) as server:
        judge = RelevanceJudge(open_backend(spec.format(port=server.port)), thinking_capable=False)
        for _ in range(2):
            stats.record(judge.judge(QUESTION, PASSAGES))
    assert stats.failures == 0 and stats.with_confidence == 0
    assert stats.confidence_reasons == {reason: 2}
    assert f"P(true) on 0/2 · 2 {reason}" in stats.line()


@pytest.mark.parametrize("spec", SPECS)
def test_a_server_refusing_the_field_is_asked_again_without_it(spec: str) -> None:
    with FakeServer(ollama_reply('{"on_topic": false}', refuse_logprobs=True)) as server:
        judge = RelevanceJudge(open_backend(spec.format(port=server.port)), thinking_capable=False)
        result = judge.judge(QUESTION, PASSAGES)
        assert len(server.chat_requests()) == 2
        later = judge.judge(QUESTION, PASSAGES)
        assert len(server.chat_requests()) == 3  # not asked again: one request per later call
    assert result.judged and result.verdict is False
    assert result.p_true is None and result.confidence_reason == LOGPROBS_REFUSED
    assert later.verdict is False and later.confidence_reason == LOGPROBS_REFUSED


def test_confidence_off_sends_no_logprobs_field() -> None:
    with FakeServer(ollama_reply('{"on_topic": true}', refuse_logprobs=True)) as server:
        judge = RelevanceJudge(
            open_backend(f"ollama://127.0.0.1:{server.port}/m"), thinking_capable=False, confidence=False
        )
        result = judge.judge(QUESTION, PASSAGES)
        assert len(server.chat_requests()) == 1
    assert result.verdict is True and result.p_true is None and result.confidence_reason is None


def test_cached_verdicts_without_confidence_are_asked_again_only_on_request(tmp_path: Path) -> None:
    chunks = [
        Candidate(text=PASSAGES[0]["text"], semantic_score=0.5, source="s.md", doc_id="s", chunk_id="c")
    ]
    _, key = judge_passages_and_key(QUESTION, chunks)
    with (
        Store(tmp_path / "s.duckdb") as store,
        FakeServer(ollama_reply('{"on_topic": false}', GOOD)) as server,
    ):
        backend = open_backend(f"ollama://127.0.0.1:{server.port}/m")
        store.put_verdict("judge", key, Verdict(True, True, None, 9.0, 30))  # stored before confidence
        _, record = CachedJudge("judge", store, backend=backend)(QUESTION, chunks)
        assert record["cached"] and record["onTopic"] is True and record["pTrue"] is None
        assert server.chat_requests() == []
        again = CachedJudge("judge", store, backend=backend, reask_confidence=True)
        _, record = again(QUESTION, chunks)
        assert len(server.chat_requests()) == 1 and record["pTrue"] == pytest.approx(0.25)
        assert store.get_verdict("judge", key).p_true == pytest.approx(0.25)
        _, record = CachedJudge("judge", store, backend=backend, reask_confidence=True)(QUESTION, chunks)
        assert len(server.chat_requests()) == 1 and record["cached"]  # asked once, then cached
