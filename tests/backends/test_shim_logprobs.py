"""The shim's logprobs fields: asked only with ``logprobs: true``, clamped to 0-20, in Ollama's shape."""

from __future__ import annotations

from nomad_lab.core.verdict_confidence import TokenChoice, choices_from_wire, confidence_from_choices
from nomad_lab.serve.state import requested_top_logprobs, wire_logprobs


def test_top_logprobs_is_read_as_ollama_documents_it() -> None:
    assert requested_top_logprobs(None, 5) is None
    assert requested_top_logprobs(False, 5) is None
    assert requested_top_logprobs("yes", 5) is None  # only a JSON true asks
    assert requested_top_logprobs(True, None) == 0
    assert requested_top_logprobs(True, 7) == 7
    assert requested_top_logprobs(True, 99) == 20 and requested_top_logprobs(True, -3) == 0
    assert requested_top_logprobs(True, True) == 0  # a bool is not a count


def test_wire_shape_round_trips_through_the_client_reader() -> None:
    choices = (
        TokenChoice('{"on_topic":', -0.05),
        TokenChoice(" véritable", -0.5, ((" true", -0.7), (" false", -1.2))),
    )
    wire = wire_logprobs(choices)
    assert wire[1]["bytes"] == list(" véritable".encode()) and set(wire[1]) == {
        "token",
        "logprob",
        "bytes",
        "top_logprobs",
    }
    assert wire[1]["top_logprobs"][0] == {"token": " true", "logprob": -0.7, "bytes": list(b" true")}
    assert choices_from_wire(wire) == choices
    assert wire_logprobs(None) == []
    assert confidence_from_choices(choices_from_wire(wire)).reason == "no-decision-token"
