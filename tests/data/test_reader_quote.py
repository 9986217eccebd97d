"""The reader's reply is read as a quote or NONE, and a quote counts only when the passages hold it."""

from __future__ import annotations

import pytest

from nomad_lab.data.reader_quote import parse_quote, reader_prompt, shown, verify

PASSAGES = (
    "# Boiling\n\nBring water to a **rolling boil** for one minute.\nAt altitude, boil for three minutes.",
    "# Bleach\n\n- Add 8 drops of unscented bleach per gallon.\n- Wait 30 minutes before drinking.",
)


@pytest.mark.parametrize(
    "reply", ["NONE", "none.", "  **NONE**", "NONE - no sentence answers this.", "", "\n\n", "1. None"]
)
def test_none_in_any_dress_is_no_quote(reply: str) -> None:
    assert parse_quote(reply) is None


@pytest.mark.parametrize(
    ("reply", "quote"),
    [
        ("Bring water to a rolling boil for one minute.", "Bring water to a rolling boil for one minute."),
        ('Answer: "At altitude, boil for three minutes."\nNONE', "At altitude, boil for three minutes."),
        ("- **Wait 30 minutes before drinking.**", "Wait 30 minutes before drinking."),
        ("Nonetheless, boil it.", "Nonetheless, boil it."),  # a word starting with none is not NONE
    ],
)
def test_a_quote_is_its_first_line_undressed(reply: str, quote: str) -> None:
    assert parse_quote(reply) == quote


def test_a_quote_counts_only_when_the_passages_hold_it_verbatim() -> None:
    lines = shown("How long should I boil water?", PASSAGES)
    assert "Boiling: Bring water to a **rolling boil** for one minute." in lines
    assert verify("bring water to a rolling  boil for one minute", PASSAGES)  # case, markup, spaces
    sentence = "Bring water to a rolling boil for one minute"
    assert verify(f"Boiling: {sentence}.", PASSAGES) == sentence  # the heading it copied is not verified
    assert verify(f"Step 3: Boiling water: {sentence}", PASSAGES) == sentence  # a heading with a colon
    assert verify("Add 8 drops of unscented bleach per gallon", PASSAGES)
    assert verify("Bring water to a boil for ten minutes.", PASSAGES) is None  # not what it says
    assert verify("one minute", PASSAGES) is None  # a span, not a sentence
    assert verify(None, PASSAGES) is None


def test_the_reader_sees_the_sentences_sharing_most_question_words_when_capped() -> None:
    every = shown("How many drops of bleach per gallon?", PASSAGES)
    capped = shown("How many drops of bleach per gallon?", PASSAGES, sentences=1)
    assert len(every) == 4 and capped == ["Bleach: Add 8 drops of unscented bleach per gallon."]
    prompt = reader_prompt("How many drops?", capped)
    assert "- Bleach: Add 8 drops" in prompt and "NONE" in prompt and prompt.rstrip().endswith("else.")
