"""Sentence units keep their context (heading, previous sentence) and the lexical choice reads the units
that share the question's rarer words."""

from nomad_lab.data.sentence_units import (
    choose_units,
    content_words,
    passage_sentences,
    passage_units,
    unit_parts,
)

TEXT = """# Kestrel K-9 filter

The Kestrel K-9 is a gravity filter. It treats 4,500 litres per cartridge.

## Cleaning

- Rinse the pre-filter weekly.
- Never use soap on the membrane.
"""


def test_sentences_carry_their_heading_and_list_items_split() -> None:
    found = passage_sentences(TEXT)
    assert found[1] == ("Kestrel K-9 filter", "It treats 4,500 litres per cartridge.")
    assert ("Cleaning", "Rinse the pre-filter weekly.") in found
    assert len(found) == 4


def test_a_unit_is_heading_previous_sentence_and_sentence() -> None:
    units = passage_units(TEXT)
    assert (
        units[1]
        == "Kestrel K-9 filter: The Kestrel K-9 is a gravity filter. It treats 4,500 litres per cartridge."
    )
    # the previous sentence is taken from the same section only
    assert units[2] == "Cleaning: Rinse the pre-filter weekly."


def test_units_are_cut_to_the_word_budget_from_the_front() -> None:
    long = "# H\n\n" + " ".join(f"w{i}" for i in range(50)) + ". Last one here."
    unit = passage_units(long, words=10)[1]
    assert len(unit.split()) <= 10 + 1 and unit.endswith("Last one here.")


def test_choose_units_prefers_rare_question_words_and_keeps_order() -> None:
    units = [
        "the filter is blue",
        "filter capacity is 4,500 litres",
        "the filter ships in a box",
        "soap harms it",
    ]
    assert choose_units("What is the capacity of the filter?", units, 1) == [1]
    assert choose_units("capacity of the filter with soap", units, 2) == [1, 3]


def test_content_words_drop_function_words_and_stem() -> None:
    assert content_words("How many litres does the filter treat?") == ["many", "litre", "filter", "treat"]
    assert content_words("boxes, box, watching, watched") == ["box", "box", "watch", "watch"]


def test_a_word_only_in_the_context_counts_less_than_one_in_the_sentence() -> None:
    units = ["Tourniquet: wash your hands first.", "Tourniquet: place it above the wound."]
    sentences = ["wash your hands first.", "place it above the wound."]
    assert choose_units("where to place a tourniquet", units, 1, sentences) == [1]
    text = "# T\n\nPlace it up high. Tighten it until bleeding stops."
    own = "Tighten it until bleeding stops."
    assert unit_parts(text)[1] == ("T: Place it up high. " + own, own)
