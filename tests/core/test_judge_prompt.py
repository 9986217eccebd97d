"""The judge's pure half: worked examples of SPEC §1.2, §1.3 and §1.5."""

from __future__ import annotations

import pytest

from nomad_lab.core.judge_prompt import (
    JUDGE_EXCERPT_CHARS,
    ON_TOPIC_SCHEMA,
    build_judge_input,
    excerpt_for,
    is_relevance_check_enabled,
    parse_verdict,
    pick_on_topic,
    resolve_structured,
)


def test_constants_match_the_seed() -> None:
    assert JUDGE_EXCERPT_CHARS == 1500
    assert ON_TOPIC_SCHEMA == {
        "type": "object",
        "properties": {"on_topic": {"type": "boolean"}},
        "required": ["on_topic"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("raw", "enabled"),
    [
        (True, True),
        ("true", True),
        (False, False),
        ("True", False),
        ("1", False),
        (1, False),
        ("yes", False),
        (None, False),
        (" true", False),
    ],
)
def test_relevance_check_is_on_only_when_explicitly_true(raw: object, enabled: bool) -> None:
    assert is_relevance_check_enabled(raw) is enabled


@pytest.mark.parametrize(
    ("value", "verdict"),
    [
        ({"on_topic": True}, True),
        ({"on_topic": False}, False),
        ({"on_topic": "yes"}, None),
        ({"on_topic": 1}, None),
        ({}, None),
        (None, None),
        ([True], None),
        ("on_topic", None),
    ],
)
def test_pick_on_topic_needs_a_real_boolean(value: object, verdict: bool | None) -> None:
    assert pick_on_topic(value) is verdict


def test_short_text_is_collapsed_and_trimmed_without_ellipses() -> None:
    assert excerpt_for("  a \n\n b\t c\ufeff", "anything") == "a b c"


def test_no_term_hits_returns_the_start_and_one_ellipsis() -> None:
    text = "x" * 2000
    assert excerpt_for(text, "what about water?") == "x" * 1500 + "\u2026"


def test_terms_shorter_than_four_characters_never_steer() -> None:
    text = "a" * 1000 + " the cat " + "b" * 1000
    assert excerpt_for(text, "the cat") == text[:1500] + "\u2026"


def test_window_opens_a_fifth_before_the_densest_hits() -> None:
    text = "z" * 2000 + " water water " + "y" * 2000
    out = excerpt_for(text, "Water?", max_chars=100)
    first_hit = text.index("water")
    assert out == "\u2026" + text[first_hit - 20 : first_hit + 80] + "\u2026"


def test_densest_window_wins_and_earliest_wins_ties() -> None:
    lone = "q" * 500 + " boil " + "q" * 500
    dense = " boil boil boil " + "r" * 500
    text = lone + dense
    out = excerpt_for(text, "boil", max_chars=100)
    start = text.index("boil boil") - 20
    assert out == "\u2026" + text[start : start + 100] + "\u2026"
    tie = "a" * 300 + " boil " + "b" * 300 + " boil " + "c" * 300
    assert excerpt_for(tie, "boil", max_chars=100).startswith("\u2026" + tie[281:300])


def test_window_is_clamped_to_the_end_of_the_text() -> None:
    text = "m" * 3000 + " antenna"
    out = excerpt_for(text, "antenna length", max_chars=1500)
    assert out == "\u2026" + text[-1500:]


def test_judge_input_layout_is_the_references() -> None:
    out = build_judge_input(
        "  How long to boil water?\n", [{"text": "Boil  it.", "title": "Water"}, {"text": "x"}]
    )
    assert out == 'Question: How long to boil water?\n\np1 (from "Water"):\nBoil it.\n\np2:\nx'


def test_judge_input_accepts_objects_and_ignores_empty_titles() -> None:
    class Passage:
        text = "hello"
        title = ""

    assert build_judge_input("q", [Passage()]) == "Question: q\n\np1:\nhello"


@pytest.mark.parametrize(
    ("raw", "verdict"),
    [
        ('{"on_topic": true}', True),
        (' ```json\n{"on_topic": false}\n``` ', False),
        ('Sure! {"on_topic": true} hope that helps', True),
        ('{"on_topic": "yes"}', None),
        ("true", None),
        ("", None),
        ("}{", None),
        ('[{"on_topic": true}]', True),
        ('{"on_topic": NaN}', None),
        ('{"on_topic": true', None),
        ("{" * 5000 + "}" * 5000, None),
    ],
)
def test_parse_verdict(raw: str, verdict: bool | None) -> None:
    assert parse_verdict(raw) is verdict


def test_failure_reason_depends_on_whether_the_grammar_was_applied() -> None:
    assert resolve_structured("nope", pick_on_topic, constrained=True).reason == "constrained-parse-failed"
    assert resolve_structured("nope", pick_on_topic, constrained=False).reason == "unconstrained"
    ok = resolve_structured('{"on_topic": false}', pick_on_topic, constrained=True)
    assert ok.ok and ok.value is False and ok.reason is None
