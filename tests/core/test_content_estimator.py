"""The content-aware estimator: what it counts, how it classifies, how it learns, and its invariants."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from nomad_lab.core.content_estimator import (
    ClassCalibrator,
    ContentEstimator,
    class_bases,
    features,
    scaled_estimate,
)
from nomad_lab.core.token_estimator import MAX_CALIBRATION_RATIO, MIN_CALIBRATION_RATIO, estimate_tokens

TABLE = "| a | b |\n|---|---|\n| 12.5 | 7 |\n| x | 300 |"
JSON = '{\n  "id": "x",\n  "tags": ["a", "b"],\n  "n": 42\n}'
CODE = "def f(x):\n    if x == 1:\n        return 2\n    return x += 1;\n"
CJK = "東京は日本の首都です。人口は多い。"


def test_digits_count_one_each_where_the_seed_counts_a_run_as_a_word() -> None:
    assert features("2026").digits == 4
    assert features("2026").base == 4
    assert features("in 2026").base == 1 + 1 + 4  # the space before a split-off digit is a token
    assert features("abcdefghijklmno").word_parts == 3  # ceil(15 / 7)
    assert estimate_tokens("2026") == 1


def test_repeated_punctuation_runs_are_cheap_and_no_space_scripts_cost_per_character() -> None:
    assert features("-" * 40).base == 1 + 40 / 4
    assert classify("정전이 길어질 때는") == "hangul"
    assert features(CJK).no_space == len(CJK)  # CJK punctuation included


def classify(text: str) -> str:
    return features(text).content_class(text)


def test_classes_are_recognized_per_block() -> None:
    assert classify(TABLE) == "table"
    assert classify(JSON) == "json"
    assert classify(CODE) == "code"
    assert classify(CJK) == "cjk"
    assert classify("Plain words in a sentence, nothing else.") == "prose"
    bases = class_bases(f"Some prose here.\n\n{TABLE}\n\n{CJK}")
    assert set(bases) == {"prose", "table", "cjk"}


def test_each_class_has_its_own_factor() -> None:
    bases = class_bases(f"{TABLE}\n\n{CJK}")
    scaled = scaled_estimate(bases, {"table": 2.0, "cjk": 0.5})
    assert scaled == math.ceil(bases["table"] * 2 + bases["cjk"] * 0.5 + bases.get("prose", 0))


def test_calibrator_learns_the_dominant_class_net_of_the_others() -> None:
    calibrator = ClassCalibrator()
    text = "\n".join([TABLE] * 6)
    base = class_bases(text)["table"]
    assert calibrator.observe("m", text, round(1.6 * base)) == round(1.6 * base) / base
    assert calibrator.factor("m", "prose") == 1.0 and calibrator.factor("other", "table") == 1.0
    assert calibrator.observe("m", "tiny", 5) is None  # under 32 real tokens: template overhead dominates
    estimator = ContentEstimator.for_model(calibrator, "m")
    assert estimator.estimate(text) == math.ceil(base * calibrator.factor("m", "table"))


def test_messages_carry_the_seed_overheads() -> None:
    estimator = ContentEstimator()
    messages = [{"role": "user", "content": "hi there"}, {"role": "system", "content": ""}]
    assert estimator.messages(messages) == 3 + 4 + estimator.estimate("hi there") + 4
    assert estimator.messages([]) == 0


texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)
factors = st.dictionaries(
    st.sampled_from(["prose", "table", "code", "json", "cjk"]), st.floats(0.01, 100.0), max_size=5
)


@settings(max_examples=200, deadline=None)
@given(texts, factors)
def test_never_negative_and_zero_only_for_empty_text(text: str, learned: dict) -> None:
    value = ContentEstimator(learned).estimate(text)
    assert value >= 0
    assert (value == 0) == (text == "")


@settings(max_examples=200, deadline=None)
@given(st.lists(texts, min_size=1, max_size=5), factors)
def test_monotone_under_concatenation_of_blocks_within_rounding(parts: list[str], learned: dict) -> None:
    """Blocks joined at a blank line cost at least the sum of their parts, less one per part for the
    rounding up each part's estimate got on its own."""
    estimator = ContentEstimator(learned)
    joined = "\n\n".join(parts)
    assert estimator.estimate(joined) >= sum(estimator.estimate(p) for p in parts) - len(parts)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(texts, st.integers(0, 10_000)), max_size=30))
def test_learned_class_factors_stay_within_the_clamp(observations: list[tuple[str, int]]) -> None:
    calibrator = ClassCalibrator()
    for text, actual in observations:
        calibrator.observe("m", text, actual)
    for learned in calibrator.factors.get("m", {}).values():
        assert MIN_CALIBRATION_RATIO <= learned <= MAX_CALIBRATION_RATIO
