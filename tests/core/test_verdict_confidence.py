"""P(on_topic = true) from token alternatives: the position, the variants, and every way it can be missing."""

from __future__ import annotations

import math

import pytest

from nomad_lab.core.verdict_confidence import (
    MALFORMED,
    NO_DECISION,
    NO_LOGPROBS,
    TokenChoice,
    choices_from_wire,
    confidence_from_choices,
    decision_index,
)


def reply(tokens: list[str], at_verdict: tuple[tuple[str, float], ...]) -> list[TokenChoice]:
    """A reply of ``tokens``, each chosen with log-prob -0.01; the verdict token carries ``at_verdict``."""
    at = decision_index(tokens)
    return [TokenChoice(t, -0.01, at_verdict if i == at else ()) for i, t in enumerate(tokens)]


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        (['{"', "on", "_topic", '":', " true", "}"], 4),
        (["{", " ", '"', "on", "_", "topic", '":', " true", " }"], 7),  # the grammar's space after {
        (['{"on_topic":', " ", "false", "}"], 2),  # a lone space token, then the word
        (['{"on_topic": tr', "ue}"], 0),
        (["no json here"], None),
        (['{"on_topic":'], None),  # cut before the value
    ],
)
def test_decision_index_finds_the_value_start(tokens: list[str], expected: int | None) -> None:
    assert decision_index(tokens) == expected


def test_variants_of_each_word_are_summed() -> None:
    top = (
        (" true", math.log(0.5)),
        ("true", math.log(0.1)),
        (" True", math.log(0.1)),
        (" false", math.log(0.2)),
    )
    got = confidence_from_choices(reply(['{"on_topic":', " true", "}"], top))
    assert got.reason is None
    assert got.p_true == pytest.approx(0.7 / 0.9)


def test_the_chosen_token_counts_even_if_absent_from_its_alternatives() -> None:
    choices = [
        TokenChoice('{"on_topic":', -0.1),
        TokenChoice(" false", math.log(0.6), ((" true", math.log(0.3)),)),
    ]
    assert confidence_from_choices(choices).p_true == pytest.approx(0.3 / 0.9)


def test_missing_and_malformed_logprobs_are_named_never_invented() -> None:
    assert confidence_from_choices(None).reason == NO_LOGPROBS
    assert confidence_from_choices([]).reason == NO_LOGPROBS
    bad = [TokenChoice('{"on_topic":', -0.1), TokenChoice(" true", math.nan)]
    assert confidence_from_choices(bad).reason == MALFORMED
    positive = reply(['{"on_topic":', " true", "}"], ((" false", 2.0),))
    assert confidence_from_choices(positive).reason == MALFORMED
    # a value that is not a boolean word: no decision token
    assert confidence_from_choices(reply(['{"on_topic":', " maybe", "}"], ())).reason == NO_DECISION
    assert confidence_from_choices(reply(["I think so"], ())).reason == NO_DECISION


def test_wire_shape_is_read_without_raising() -> None:
    wire = [
        {"token": '{"on_topic":', "logprob": -0.2, "top_logprobs": []},
        {
            "token": " true",
            "logprob": math.log(0.8),
            "top_logprobs": [{"token": " false", "logprob": math.log(0.2)}],
        },
    ]
    assert confidence_from_choices(choices_from_wire(wire)).p_true == pytest.approx(0.8)
    assert choices_from_wire(None) is None
    for broken in (
        "nonsense",
        [1, 2],
        [{"token": 3, "logprob": "x"}],
        [{"token": "a", "logprob": -1, "top_logprobs": 7}],
    ):
        assert confidence_from_choices(choices_from_wire(broken)).reason == MALFORMED
