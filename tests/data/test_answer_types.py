"""Expected-answer-type evidence on planted examples: the type a question asks for, and whether a sentence
holds a value of it (including the near-miss: a tone in Hz is not a frequency in MHz)."""

import pytest

from nomad_lab.data.answer_types import evidence, expected_type, holds_value


@pytest.mark.parametrize(
    ("question", "kind", "unit"),
    [
        ("How many hours should I soak dried beans?", "duration", None),
        ("how long do I boil water before drinking it", "duration", None),
        ("How often should the cartridge be replaced?", "frequency", None),
        ("At what temperature does the pump shut off?", "temperature", None),
        ("How far can a handheld radio reach?", "length", None),
        ("How much does the full kit weigh?", "mass", None),
        ("How much does the Kestrel K-9 cost?", "money", None),
        ("What percentage of the tank should stay full?", "percent", None),
        ("When was the network founded?", "date", None),
        ("How many batteries does it take?", "number", None),
        ("What frequency in MHz is channel 17?", "number", "mhz"),
        ("Why should I elevate a sprained ankle?", None, None),
        ("Who maintains the shelter list?", None, None),
    ],
)
def test_expected_type(question: str, kind: str | None, unit: str | None) -> None:
    assert expected_type(question) == (kind, unit)


@pytest.mark.parametrize(
    ("sentence", "kind", "unit", "holds"),
    [
        ("Soak them for 8-12 hours in cold water.", "duration", None, True),
        ("Leave them overnight.", "duration", None, True),
        ("Soak them in plenty of cold water.", "duration", None, False),
        ("Replace it every six months.", "frequency", None, True),
        ("Replace it when the flow slows.", "frequency", None, False),
        ("Keep it above 5 °C.", "temperature", None, True),
        ("The bag weighs 1.2 kg empty.", "mass", None, True),
        ("The bag is made of ripstop nylon.", "mass", None, False),
        ("It sells for $49.", "money", None, True),
        ("Channel 17 is 462.600 MHz.", "number", "mhz", True),
        ("Channel 17 uses a 67.0 Hz tone.", "number", "mhz", False),
        ("Range is about 2 miles in open terrain.", "length", None, True),
    ],
)
def test_holds_value(sentence: str, kind: str, unit: str | None, holds: bool) -> None:
    assert holds_value(sentence, kind, unit) is holds


def test_evidence_marks_each_sentence_and_nothing_when_no_value_is_asked() -> None:
    found = evidence("How many minutes should I press on the wound?", ["Press for 3 minutes.", "Press hard."])
    assert (found.expected, found.hits, found.any_hit) == ("duration", (True, False), True)
    none = evidence("Why press on a wound?", ["Press for 3 minutes."])
    assert (none.expected, none.hits) == (None, (False,))


def test_an_unknown_type_is_refused() -> None:
    with pytest.raises(ValueError, match="answer type 'colour'"):
        holds_value("It is red.", "colour")
