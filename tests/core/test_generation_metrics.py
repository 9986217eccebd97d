"""Deterministic generation metrics (SPEC §8.4): a worked example for every regex family and quirk."""

from __future__ import annotations

import json
import re

import pytest

from nomad_lab.core.generation_metrics import (
    BUDGET_FIELDS,
    GENERATION_METRIC_NAMES,
    LEAKAGE_PATTERNS,
    MARKDOWN_PATTERNS,
    REFUSAL_PATTERNS,
    RepeatStats,
    aggregate_by_tag,
    aggregate_generation,
    build_case,
    extract_numbers,
    prompt_token_error,
    score_answer,
    summarize_numeric,
)
from tests.support.paths import FIXTURES


def families(patterns: tuple[re.Pattern[str], ...], text: str) -> set[int]:
    return {i for i, p in enumerate(patterns) if p.search(text)}


REFUSALS = [
    (0, "I don't know how long that takes."),
    (0, "Sorry, I do not have that detail."),
    (1, "I'm not able to answer medical questions."),
    (1, "I am unable to say."),
    (2, "I couldn't find the call sign."),
    (2, "I can\u2019t find it anywhere."),  # typographic apostrophe
    (3, "There is not enough information to say."),
    (3, "I have no details on that shelter."),
    (4, "The guide doesn't mention the price."),
    (4, "The text does not contain a phone number."),
    (5, "The zone isn't specified."),
    (5, "That figure is not provided."),
    (6, "The coordinator's number is not documented."),
    (7, "Unable to determine the date."),
    (8, "There's no record of a Zone E."),
    (8, "There is no mention of SODIS."),
    (9, "I'd need more details about the radio."),
    (9, "I would need more context."),
]


@pytest.mark.parametrize(("family", "text"), REFUSALS)
def test_each_refusal_family(family: int, text: str) -> None:
    assert family in families(REFUSAL_PATTERNS, text)
    assert score_answer(text).refused


@pytest.mark.parametrize(
    "text",
    [
        "Boil for 3 minutes above 2,000 m.",
        "Unknown water should be treated.",  # "unknown" is not "i don't know"
        "I know the dose: 8 drops.",
        "Announcements are mentioned at the net's start.",  # "mentioned" alone is no refusal
        "I'd need a compass.",
    ],
)
def test_answers_that_are_not_refusals(text: str) -> None:
    assert not score_answer(text).refused


LEAKS = [
    (0, "According to the provided context, boil it."),
    (0, "Based on the context, add 8 drops."),
    (0, "Per the retrieved context the dose is 8 drops."),
    (1, "As Context 2 says, wait 30 minutes."),
    (2, "The knowledgebase lists two bands."),
    (2, "The knowledge base does not say."),
    (3, "The retrieved passages describe a tourniquet."),
    (3, "The supplied document covers it."),
    (4, "The context doesn't give a number."),
    (4, "The context appears to be about radios."),
    (5, "In the documents provided, nothing matches."),
    (5, "From the passage above: 8 drops."),
    (6, "There is no context about the moon."),
    (6, "Without any context I would guess."),
    (7, "The search results show two answers."),
]


@pytest.mark.parametrize(("family", "text"), LEAKS)
def test_each_narration_family(family: int, text: str) -> None:
    assert family in families(LEAKAGE_PATTERNS, text)
    score = score_answer(text)
    assert score.leakage and not score.leakage_free
    assert LEAKAGE_PATTERNS[family].pattern in score.leakage


@pytest.mark.parametrize(
    "text", ["In context, that means boiling longer.", "Knowledge is power.", "Search the base of the hill."]
)
def test_plain_answers_do_not_narrate(text: str) -> None:
    assert score_answer(text).leakage == []


@pytest.mark.parametrize(
    ("text", "leak"),
    [
        ("<think>plan</think>Boil it.", True),
        ("Answer.</think>", True),
        ("<Thinking type='hidden'>x", True),
        ("<thought>", True),
        ("</REASONING>", True),
        ("<thinker> is a word", False),
        ("<thoughtful>", False),
        ("think about it", False),
    ],
)
def test_think_tag_leak(text: str, leak: bool) -> None:
    assert score_answer(text).think_tag_leak is leak


def test_numbers_are_normalized_and_deduped() -> None:
    assert extract_numbers("1,150 Wh, then 1150 again, 2.50 L, 3.0 m, 1,150.00 and 7.") == [
        "1150",
        "2.50",
        "3",
        "7",
    ]
    assert extract_numbers("5, 6 and 10.") == ["5", "6", "10"]  # a trailing comma is punctuation


def test_numeric_groundedness() -> None:
    context = "Store 340 gallons. Two weeks is 14 days. Add 8 drops per gallon."
    grounded = score_answer("Your 340-gallon tank lasts 14 days for 4 people.", context=context)
    assert grounded.numeric_groundedness == 1.0 and grounded.ungrounded_numbers == []  # 4 is not a claim
    wrong = score_answer("Add 12 drops per 340 gallons.", context=context)
    assert wrong.numeric_groundedness == 0.5 and wrong.ungrounded_numbers == ["12"]
    assert score_answer("Boil for 3 minutes, or 10.", context=context).numeric_groundedness is None
    assert score_answer("About 10.5 litres.", context="").ungrounded_numbers == ["10.5"]  # > 10 claims
    assert score_answer("Use 1,150 Wh.", context="daily usage 1150 Wh").numeric_groundedness == 1.0


@pytest.mark.parametrize(
    ("text", "index"),
    [
        ("## Steps\nBoil.", 0),
        ("Do this:\n- boil\n- cool", 1),
        ("1. boil\n2. cool", 2),
        ("Boil for **3 minutes**.", 3),
        ("Run `chlorine test`.", 4),
        ("| dose | volume |\n|---|---|", 5),
    ],
)
def test_markdown_detection(text: str, index: int) -> None:
    assert MARKDOWN_PATTERNS[index].search(text)
    assert score_answer(text).markdown_formatted


@pytest.mark.parametrize("text", ["Boil for 3 minutes.", "a * b = c", "3.5 litres a day", "#hashtag"])
def test_prose_is_not_markdown(text: str) -> None:
    assert not score_answer(text).markdown_formatted


def test_correctness_is_case_insensitive_for_strings_and_compiled_patterns() -> None:
    answer = "Boil for THREE MINUTES at altitude."
    assert score_answer(answer, must_include=["three minutes|3 minutes"]).correct
    assert score_answer(answer, must_include=[re.compile("three minutes")]).correct  # no flag given
    assert score_answer(answer).correct  # empty lists: trivially correct
    bad = score_answer(answer, must_include=["altitude", r"\b5\b"], must_not_include=["boil"])
    assert not bad.correct
    assert bad.missed_required == [r"\b5\b"] and bad.hit_forbidden == ["boil"]
    assert bad.length == len(answer)


def test_refusal_correctness_depends_on_the_golden() -> None:
    refusal = "I don't know."
    assert score_answer(refusal, expect_refusal=True).refusal_correct
    assert not score_answer(refusal, expect_refusal=False).refusal_correct
    assert score_answer("Boil it.", expect_refusal=False).refusal_correct
    assert not score_answer("Boil it.", expect_refusal=True).refusal_correct


def test_repeat_stats_and_numeric_summaries() -> None:
    assert RepeatStats.of([True, False, True]).to_reference() == {
        "passes": 2,
        "repeats": 3,
        "passRate": 2 / 3,
        "unstable": True,
    }
    assert not RepeatStats.of([True]).unstable and not RepeatStats.of([False, False]).unstable
    assert RepeatStats.of([]).pass_rate == 0.0
    assert summarize_numeric([0.5, None, 1.0]) == {"mean": 0.75, "stddev": 0.25, "n": 2}
    assert summarize_numeric([None]) is None and summarize_numeric([]) is None
    assert prompt_token_error(100, 90) == pytest.approx(0.1)
    assert prompt_token_error(100, 125) == pytest.approx(0.25)
    assert prompt_token_error(None, 90) is None and prompt_token_error(0, 5) is None


def budget(elided: bool, dropped: int, tokens: int) -> dict:
    return {
        "contextWindow": 4096,
        "estimatedPromptTokens": tokens,
        "promptBudget": 3072,
        "turnsDropped": 4 if elided else 0,
        "chunksDropped": dropped,
        "historyElided": elided,
        "queryTruncated": False,
        "ragTokens": 99,  # not a case budget field: left out
    }


def test_aggregate_by_hand() -> None:
    a = build_case(
        "a",
        ["numeric"],
        False,
        ["Boil 3 minutes.", "Boil 3 minutes."],
        ["boil 3 minutes"] * 2,
        must_include=["3 minutes"],
        budget=budget(True, 0, 100),
        prompt_token_error=0.1,
    )
    b = build_case(
        "b",
        ["numeric", "multi-turn"],
        False,
        ["According to the context, 12 drops.", "I don't know."],
        ["8 drops", "8 drops"],
        must_include=["8 drops"],
        budget=budget(False, 2, 300),
        prompt_token_error=0.3,
    )
    c = build_case("c", ["multi-turn"], False, ["8 drops", "twelve"], ["", ""], must_include=["8 drops"])
    d = build_case("d", ["numeric"], False, [], [], error="BackendError: timeout")
    assert set(a.budget) == set(BUDGET_FIELDS) and c.budget is None
    assert (a.correctness.pass_rate, b.correctness.pass_rate, c.correctness.unstable) == (1.0, 0.0, True)
    agg = aggregate_generation([a, b, c, d])
    assert (agg.cases, agg.unstable, agg.errors) == (4, 1, 1)
    assert agg.correctness == pytest.approx((1 + 0 + 0.5) / 3)
    assert agg.refusal_correctness == pytest.approx((1 + 0.5 + 1) / 3)
    assert agg.leakage_rate == pytest.approx(1 / 6)
    assert (agg.think_tag_leak_rate, agg.markdown_rate) == (0.0, 0.0)
    assert agg.groundedness == {"mean": 0.0, "stddev": 0.0, "n": 1}  # only "12" is a claim
    assert (agg.history_elided_rate, agg.chunks_dropped_rate) == (0.5, 0.5)
    assert agg.prompt_token_error["mean"] == pytest.approx(0.2) and agg.prompt_token_error["n"] == 2
    assert agg.mean_prompt_tokens == 200
    metrics = agg.metrics()
    assert tuple(metrics) == GENERATION_METRIC_NAMES
    assert metrics["groundedness"] == 0.0 and metrics["promptTokenError"] == pytest.approx(0.2)
    tags = aggregate_by_tag([a, b, c, d])
    assert list(tags) == ["multi-turn", "numeric"]
    assert tags["multi-turn"].correctness == 0.25 and tags["numeric"].errors == 1
    case = b.to_reference()
    assert case["scores"][0]["leakage"] and case["refusalCorrectness"]["unstable"]
    assert "error" not in case and d.to_reference()["error"] == "BackendError: timeout"


def test_metric_names_are_the_references() -> None:
    """The names and order the reference's generation report uses (docs/reference.md §8.5), as committed."""
    reference = json.loads((FIXTURES / "reference" / "report_metrics.json").read_text(encoding="utf-8"))
    assert tuple(reference["generation"]) == GENERATION_METRIC_NAMES


def test_empty_aggregate_is_all_null() -> None:
    agg = aggregate_generation([])
    assert agg.cases == 0 and all(v is None for v in agg.metrics().values())
