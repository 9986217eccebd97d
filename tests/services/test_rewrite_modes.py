"""The structured rewrite (default) and the earlier free-text one, on a scripted backend."""

from __future__ import annotations

from nomad_lab.backends import ChatResult
from nomad_lab.core.prompts import QUERIES_SCHEMA, QUERY_REWRITE_LEGACY_SYSTEM_PROMPT
from nomad_lab.services.query_rewrite import rewrite_query
from tests.support.scripted_backend import ScriptedBackend

CONVERSATION = [
    {"role": "user", "content": "How long do I boil creek water?"},
    {"role": "assistant", "content": "One minute at a rolling boil."},
    {"role": "user", "content": "And at 2,400 m?"},
]


class FreeText(ScriptedBackend):
    def __init__(self, reply: str) -> None:
        super().__init__()
        self.reply = reply

    def chat(self, request):  # type: ignore[no-untyped-def]
        self.requests.append(request)
        return ChatResult(self.reply)


def test_structured_is_the_default_with_schema_and_thinking_off() -> None:
    backend = ScriptedBackend(rewrite="boiling time at 2400 m altitude")
    result = rewrite_query(backend, "m", CONVERSATION)
    options = backend.requests[0].options
    assert (options.format, options.think) == (QUERIES_SCHEMA, False)
    assert (result.query, result.did_rewrite) == ("boiling time at 2400 m altitude", True)


def test_structured_empty_queries_fall_back_to_the_raw_message() -> None:
    result = rewrite_query(ScriptedBackend(rewrite="   "), "m", CONVERSATION)
    assert (result.query, result.did_rewrite) == ("And at 2,400 m?", False)


def test_free_text_sends_no_schema_and_takes_the_first_line() -> None:
    backend = FreeText("  boiling water time at altitude 2400 m\nbecause the user asked")
    result = rewrite_query(backend, "m", CONVERSATION, structured=False)
    request = backend.requests[0]
    assert request.options.format is None and request.options.think is False
    assert request.messages[0]["content"] == QUERY_REWRITE_LEGACY_SYSTEM_PROMPT
    assert (result.query, result.did_rewrite, result.reason) == (
        "boiling water time at altitude 2400 m",
        True,
        "free-text",
    )
    empty = rewrite_query(FreeText("  \n "), "m", CONVERSATION, structured=False)
    assert (empty.query, empty.did_rewrite) == ("And at 2,400 m?", False)
