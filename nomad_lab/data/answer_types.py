"""Expected-answer-type evidence, without a model: what kind of value a question asks for ("how many
hours" asks for a duration, "what frequency in MHz" for a number in MHz), and whether a sentence holds a
value of that kind.

Why: a relevance model rewards the near-miss sentence about the right entity (a question about a
channel's frequency in MHz scores high on a sentence naming the channel's tone in Hz). Whether a
sentence holds a value of the asked kind at all is a cheap, general signal of containment. It is weak
alone (a sentence may hold a duration that is not the one asked), so the sufficiency check reads it as
one input beside its model (:mod:`nomad_lab.studies.gating.sufficiency`), never as a gate by itself.

General English only: the cues and value patterns are the question words and units of everyday
measurement, written without reading any golden question. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["TYPES", "Evidence", "cue_tables", "evidence", "expected_type", "holds_value"]

_NUMBER = (
    r"(?:\d[\d,]*(?:\.\d+)?|\.\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|forty|fifty|sixty|hundred|thousand|a few|several|half an?|a couple of)"
)
_RANGE = rf"{_NUMBER}(?:\s*(?:-|–|—|to|or|and)\s*{_NUMBER})?"
_TIME_UNITS = r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|nights?|weeks?|months?|years?|yrs?)"
_LENGTH_UNITS = (
    r"(?:mm|cm|m|km|metres?|meters?|kilometres?|kilometers?|millimetres?|millimeters?|centimetres?|"
    r"centimeters?|inch(?:es)?|in\.|ft|feet|foot|yards?|yd|miles?|mi)"
)
_MASS_UNITS = r"(?:mg|g|kg|grams?|kilograms?|milligrams?|lbs?|pounds?|ounces?|oz|tons?|tonnes?)"
_VOLUME_UNITS = (
    r"(?:ml|l|litres?|liters?|millilitres?|milliliters?|gallons?|gal|quarts?|pints?|cups?|"
    r"tablespoons?|tbsp|teaspoons?|tsp|fl\.? ?oz)"
)
TYPES: dict[str, str] = {
    "duration": rf"\b{_RANGE}\s*(?:-\s*)?{_TIME_UNITS}\b|\b(?:overnight|immediately|instantly)\b",
    "frequency": r"\bevery\b|\b(?:once|twice|\d+ times?)\b|\btimes? (?:a|per|each)\b"
    r"|\bper (?:day|week|month|year|hour)\b|\b(?:daily|weekly|monthly|annually|yearly|hourly|nightly)\b",
    "temperature": r"°|\bdegrees?\b|\b\d+\s*(?:°?\s*[CF])\b|\b(?:celsius|fahrenheit|kelvin)\b",
    "length": rf"\b{_RANGE}\s*(?:-\s*)?{_LENGTH_UNITS}(?![a-z])",
    "mass": rf"\b{_RANGE}\s*(?:-\s*)?{_MASS_UNITS}\b",
    "volume": rf"\b{_RANGE}\s*(?:-\s*)?{_VOLUME_UNITS}\b",
    "money": r"[$€£¥]\s?\d|\b\d[\d,.]*\s*(?:dollars?|euros?|pounds sterling|cents?|usd|eur|gbp)\b|\bfree\b",
    "percent": r"\b\d[\d,.]*\s*(?:%|percent|per cent)",
    "date": r"\b(?:1[5-9]|20)\d\d\b|\b(?:january|february|march|april|may|june|july|august|september|"
    r"october|november|december|spring|summer|autumn|fall|winter|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday)\b|\b\d{1,2}(?::\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)",
    "number": rf"\b{_NUMBER}\b",
}
"""Each answer type and a pattern for a value of it (matched lowercase)."""

# (question cue, answer type): first match wins, most specific first
_CUES: tuple[tuple[str, str], ...] = (
    (
        rf"\bhow many {_TIME_UNITS}\b|\bhow long (?:do|does|did|should|will|can|must|is it|before|until|after"
        r"|to|for)\b|\bfor how long\b|\bhow much time\b|\bhow soon\b|\bwithin how\b",
        "duration",
    ),
    (r"\bhow (?:often|frequently)\b|\bhow many times\b", "frequency"),
    (
        r"\bwhat temperature\b|\bhow (?:hot|cold|warm)\b|\bat what temperature\b|\bhow many degrees\b",
        "temperature",
    ),
    (
        rf"\bhow (?:far|deep|high|tall|wide|thick|long is|long are|long a)\b|\bhow many {_LENGTH_UNITS}\b"
        r"|\bwhat (?:distance|length|height|width|depth|diameter)\b",
        "length",
    ),
    (
        rf"\bhow heavy\b|\bhow much (?:does|do|did) [^?]{{0,40}}?\bweigh\b|\bhow many {_MASS_UNITS}\b"
        r"|\bwhat (?:weight|mass)\b",
        "mass",
    ),
    (rf"\bhow many {_VOLUME_UNITS}\b|\bwhat (?:volume|capacity)\b", "volume"),
    (
        r"\bhow much (?:does|do|did|will|would) [^?]{0,40}?\bcost\b|\bwhat (?:is the |does the )?"
        r"(?:price|cost|fee)\b|\bhow much is\b|\bhow expensive\b",
        "money",
    ),
    (r"\bwhat (?:percent|percentage|proportion|share)\b|\bhow many percent\b", "percent"),
    (
        r"\bwhen (?:was|were|did|is|does|do|will)\b|\bwhat (?:year|date|day|month|time of year)\b"
        r"|\bin what year\b|\bwhat time\b",
        "date",
    ),
    (r"\bhow (?:many|much)\b|\bwhat (?:number|amount|quantity|size|rating|dose|dosage)\b", "number"),
)
_UNIT_ASKED = re.compile(r"\b(?:in|how many)\s+([a-zA-Z°%][a-zA-Z/°%]{0,11})\b(?=[?.,\s]|$)")
_UNIT_WORDS = (
    "mhz khz ghz hz mph kph km/h psi bar kpa watts watt volts volt amps amp mah kwh wh lumens db dbm "
    "calories kcal rpm ppm knots mb gb kb tb bytes bits"
)
_NAMED_UNITS = frozenset(_UNIT_WORDS.split())


@dataclass(frozen=True)
class Evidence:
    """``expected``: the answer type the question asks for (None: none recognised); ``unit``: a named
    unit the question asks the value in ("mhz"); ``hits``: which of the given sentences hold such a value."""

    expected: str | None
    unit: str | None
    hits: tuple[bool, ...]

    @property
    def any_hit(self) -> bool:
        return any(self.hits)


def expected_type(question: str) -> tuple[str | None, str | None]:
    """(answer type, named unit) a question asks for; (None, None) when it asks for no value.

    >>> expected_type("How many hours should I soak the beans?")
    ('duration', None)
    >>> expected_type("What frequency in MHz is channel 17?")
    ('number', 'mhz')
    """
    lowered = " ".join(question.lower().split())
    unit = next((u.lower() for u in _UNIT_ASKED.findall(lowered) if u.lower() in _NAMED_UNITS), None)
    for cue, kind in _CUES:
        if re.search(cue, lowered):
            return kind, unit
    return ("number", unit) if unit else (None, None)


def holds_value(sentence: str, kind: str, unit: str | None = None) -> bool:
    """Whether ``sentence`` holds a value of ``kind`` (and, with ``unit``, a number in that unit)."""
    if kind not in TYPES:
        raise ValueError(f"answer type {kind!r}: expected one of {', '.join(TYPES)}")
    lowered = sentence.lower()
    if unit is not None:
        return re.search(rf"\d[\d,.]*\s*{re.escape(unit)}(?![a-z])", lowered) is not None
    return re.search(TYPES[kind], lowered) is not None


def evidence(question: str, sentences: Sequence[str]) -> Evidence:
    """The question's expected type and which ``sentences`` hold a value of it (all False when the
    question expects none)."""
    kind, unit = expected_type(question)
    if kind is None:
        return Evidence(None, None, tuple(False for _ in sentences))
    return Evidence(kind, unit, tuple(holds_value(s, kind, unit) for s in sentences))


def cue_tables() -> dict[str, object]:
    """The answer types, question cues and asked-unit pattern as data, for a port that must find the same
    evidence (the sufficiency bundle's ``sufficiency_units.ts``): Python regex syntax."""
    return {
        "types": dict(TYPES),
        "cues": [list(cue) for cue in _CUES],
        "unitAsked": _UNIT_ASKED.pattern,
        "namedUnits": sorted(_NAMED_UNITS),
    }
