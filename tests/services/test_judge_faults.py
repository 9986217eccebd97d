"""The judge fails OPEN on every kind of failure, with its reason recorded, and never raises (SPEC §1.5).

The faults are real: a closed port, a local socket server that accepts and never answers, and a tiny
HTTP server answering 500, non-JSON, or a schema-violating verdict, on both transports.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from nomad_lab.backends import ModelEntry, open_backend
from nomad_lab.serve.process import free_port
from nomad_lab.services.judge_service import (
    JudgeResult,
    JudgeStats,
    RelevanceJudge,
    resolve_tasks_model,
)
from nomad_lab.services.query_rewrite import rewrite_query
from tests.support.fake_ollama import FakeServer, ollama_reply

PASSAGES = [{"text": "Cool a burn under running water for twenty minutes."}, {"text": "Walden pond."}]
QUESTION = "How do I treat a burn?"


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A socket server that accepts connections and never answers."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


def with_timeout(spec: str, seconds: float) -> str:
    return f"{spec}{'&' if '?' in spec else '?'}timeout={seconds}"


def judge_on(spec: str) -> JudgeResult:
    return RelevanceJudge(open_backend(spec)).judge(QUESTION, PASSAGES)


def assert_failed_open(result: JudgeResult, reason: str) -> None:
    assert result.reason == reason
    assert (result.judged, result.verdict, result.rejected) == (False, None, 0)
    assert result.kept == PASSAGES
    assert result.ms >= 0


TRANSPORTS = ["ollama://127.0.0.1:{port}/m", "openai://127.0.0.1:{port}/v1/m?format=json_schema"]


@pytest.mark.parametrize("template", TRANSPORTS)
def test_connection_refused(template: str) -> None:
    assert_failed_open(judge_on(with_timeout(template.format(port=free_port()), 5)), "connection-refused")


@pytest.mark.parametrize("template", TRANSPORTS)
def test_timeout(template: str, silent_port: int) -> None:
    result = judge_on(with_timeout(template.format(port=silent_port), 0.5))
    assert_failed_open(result, "timeout")
    assert result.ms >= 450  # it waited out its 0.5 s timeout rather than failing at once


@pytest.mark.parametrize("template", TRANSPORTS)
def test_http_500(template: str) -> None:
    with FakeServer(lambda _path: (500, "application/json", '{"error": "boom"}')) as server:
        assert_failed_open(judge_on(template.format(port=server.port)), "http-500")
        assert len(server.chat_requests()) == 1  # no retries hide the failure


@pytest.mark.parametrize("template", TRANSPORTS)
def test_non_json_reply(template: str) -> None:
    with FakeServer(lambda _path: (200, "text/plain", "hello, not json")) as server:
        assert_failed_open(judge_on(template.format(port=server.port)), "bad-response")


@pytest.mark.parametrize("template", TRANSPORTS)
def test_verdict_that_is_not_a_boolean(template: str) -> None:
    with FakeServer(ollama_reply('{"on_topic": "yes"}')) as server:
        result = judge_on(template.format(port=server.port))
    assert_failed_open(result, "constrained-parse-failed")  # the format was sent, so the grammar failed
    assert result.prompt_tokens == 50


def test_unconstrained_transport_reports_unconstrained() -> None:
    with FakeServer(ollama_reply("Sure! It is on topic.")) as server:
        assert_failed_open(judge_on(f"openai+noformat://127.0.0.1:{server.port}/v1/m"), "unconstrained")


@pytest.mark.parametrize(
    ("content", "verdict", "kept", "rejected"),
    [('{"on_topic": true}', True, PASSAGES, 0), ('x {"on_topic": false} y', False, [], 2)],
)
def test_verdicts_are_all_or_nothing(content: str, verdict: bool, kept: list[object], rejected: int) -> None:
    with FakeServer(ollama_reply(content)) as server:
        result = judge_on(f"ollama://127.0.0.1:{server.port}/m")
    assert (result.judged, result.verdict, result.kept, result.rejected, result.reason) == (
        True,
        verdict,
        kept,
        rejected,
        None,
    )


def test_empty_set_or_blank_question_is_unjudged_without_a_call() -> None:
    with FakeServer(ollama_reply('{"on_topic": true}')) as server:
        judge = RelevanceJudge(open_backend(f"ollama://127.0.0.1:{server.port}/m"))
        assert judge.judge(QUESTION, []) == JudgeResult([], 0, False, reason="no-chunks")
        assert judge.judge(" \n\t", PASSAGES).reason == "blank-question"
        assert server.requests == []  # not even /api/show


def test_stats_line() -> None:
    stats = JudgeStats("m")
    for result in [
        JudgeResult([], 3, True, False, None, 100.0),
        JudgeResult([1], 0, False, None, "timeout", 250.4),
        JudgeResult([], 0, False, reason="no-chunks"),
    ]:
        stats.record(result)
    assert stats.line() == (
        "Relevance check: m · 2 calls · rejected 3 chunk(s) · 1 failed open · mean 175ms max 250ms · "
        "P(true) on 0/2 · 2 never-asked"
    )
    assert stats.reasons == {"timeout": 1}


class Listing:
    kind, model = "stub", None

    def __init__(self, names: list[str] | Exception) -> None:
        self.names = names

    def list_models(self) -> list[ModelEntry]:
        if isinstance(self.names, Exception):
            raise self.names
        return [ModelEntry(n) for n in self.names]


def test_tasks_model_resolution() -> None:
    installed = Listing(["llama3:8b", "qwen2.5:0.5b", "nomic-embed-text:latest"])
    assert resolve_tasks_model(installed, "llama3:8b", " qwen2.5:0.5b ") == "qwen2.5:0.5b"
    assert resolve_tasks_model(installed, "llama3:8b", "") == "llama3:8b"
    assert resolve_tasks_model(installed, "llama3:8b", "qwen2.5") == "llama3:8b"  # exact match only
    assert resolve_tasks_model(installed, "llama3:8b", "nomic-embed-text:latest") == "llama3:8b"
    assert resolve_tasks_model(Listing(RuntimeError("down")), "llama3:8b", "qwen2.5:0.5b") == "llama3:8b"


CONVERSATION = [
    {"role": "user", "content": "Tell me about Walden."},
    {"role": "assistant", "content": "Walden is a book by Thoreau. " * 20},
    {"role": "user", "content": "When was it written?"},
]


def test_rewrite_falls_back_on_failure_and_uses_the_first_query() -> None:
    refused = open_backend(f"ollama://127.0.0.1:{free_port()}/m")
    failed = rewrite_query(refused, "m", CONVERSATION)
    assert (failed.query, failed.did_rewrite, failed.reason) == (
        "When was it written?",
        False,
        "connection-refused",
    )
    assert rewrite_query(refused, "m", CONVERSATION[:1]).reason == "single-turn"
    with FakeServer(ollama_reply('{"queries": ["  ", "When was Walden written?"]}')) as server:
        done = rewrite_query(open_backend(f"ollama://127.0.0.1:{server.port}/m"), "m", CONVERSATION)
    assert (done.query, done.did_rewrite) == ("When was Walden written?", True)
    with FakeServer(ollama_reply("Walden publication date")) as server:
        raw = rewrite_query(
            open_backend(f"openai+noformat://127.0.0.1:{server.port}/v1/m"), "m", CONVERSATION
        )
    assert (raw.query, raw.did_rewrite, raw.reason) == ("Walden publication date", True, "unconstrained")
