"""Token estimator and calibrator (SPEC §3): worked examples, quirks and properties."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nomad_lab.core.token_estimator import (
    TokenCalibrator,
    chars_per_token_estimate,
    clamp_ratio,
    estimate_messages_tokens,
    estimate_tokens,
    estimate_tokens_conservative,
    ewma,
)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        (" ", 1),  # at least one token for any non-empty text
        ("hello", 1),
        ("Hello, world!", 4),  # Hello , world !
        ("internationalization", 3),  # 20 chars > 7 -> ceil(20/7)
        ("abcdefg", 1),
        ("abcdefgh", 2),
        ('{"a": [1, 2]}', 8),  # {" a ": [ 1 , 2 ]} -> 1+1+1+1+1+1+1+1
        ("日本語", 3),
        ("한국어", 3),
        ("a\nb\n", 4),  # two words + two newlines
        ("...", 2),
        ("😀😀", 2),  # four UTF-16 units of punctuation-class run
        ("Ünïcødé", 1),  # Latin-1 and Latin Extended letters are word characters
        ("naïve—café", 3),  # the em dash is a punctuation run
    ],
)
def test_worked_examples(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


def test_ratio_scales_and_rounds_up() -> None:
    assert estimate_tokens("one two three", 1.26) == 4  # ceil(3*1.26)
    assert estimate_tokens("one", 0.5) == 1  # floor at 1


def test_messages_add_conversation_and_message_overheads() -> None:
    assert estimate_messages_tokens([]) == 0
    messages = [{"role": "system", "content": "hi there"}, {"role": "user", "content": "ok"}]
    assert estimate_messages_tokens(messages) == 3 + (2 + 4) + (1 + 4)
    assert estimate_messages_tokens([{"role": "user", "content": "a b c"}], 1.5) == 3 + 5 + 4


def test_conservative_and_divisor_baselines() -> None:
    assert estimate_tokens_conservative("one two three") == 4
    assert chars_per_token_estimate("abcdefg", 3.5) == 2
    assert chars_per_token_estimate("", 4) == 0


TEXT = st.lists(st.sampled_from([*"ab Z9.,{}\n\t日한é😀-_", "word", "internationalization"])).map("".join)


@given(TEXT, TEXT)
def test_monotone_and_subadditive_under_concatenation(a: str, b: str) -> None:
    whole = estimate_tokens(a + b)
    assert max(estimate_tokens(a), estimate_tokens(b)) <= whole <= estimate_tokens(a) + estimate_tokens(b) + 1


@pytest.mark.parametrize(
    ("raw", "clamped"),
    [
        (0.1, 0.5),
        (3.0, 2.5),
        (1.26, 1.26),
        (0, 1.0),
        (-2, 1.0),
        (float("nan"), 1.0),
        (float("inf"), 1.0),
        ("2", 1.0),
        (True, 1.0),
    ],
)
def test_clamp(raw: object, clamped: float) -> None:
    assert clamp_ratio(raw) == clamped


def test_ewma_takes_the_first_observation_whole() -> None:
    assert ewma(None, 1.4) == 1.4
    assert ewma(1.0, 2.0) == pytest.approx(1.25)


def test_calibrator_learns_skips_and_clamps(tmp_path: Path) -> None:
    calibrator = TokenCalibrator(tmp_path / "ratios.json")
    assert calibrator.ratio_for("m") == 1.0
    assert calibrator.observe("m", 100, None) is None
    assert calibrator.observe("m", 100, 31) is None  # template overhead dominates tiny prompts
    assert calibrator.observe("m", 0, 100) is None
    assert calibrator.observe("m", 100, 126) == pytest.approx(1.26)
    assert calibrator.observe("m", 100, 100) == pytest.approx(1.26 * 0.75 + 0.25)
    assert calibrator.observe("big", 10, 1000) == 2.5
    assert calibrator.ratio_for("other") == 1.0


def test_calibrator_persists_only_on_meaningful_change(tmp_path: Path) -> None:
    path = tmp_path / "ratios.json"
    calibrator = TokenCalibrator(path)
    calibrator.observe("m", 1000, 1200)
    assert json.loads(path.read_text()) == {"m": 1.2}
    calibrator.observe("m", 1000, 1240)  # 1.2 -> 1.21: within 0.02 of what was written
    assert json.loads(path.read_text()) == {"m": 1.2}
    calibrator.observe("m", 1000, 1400)  # -> 1.2575
    assert json.loads(path.read_text()) == {"m": 1.2575}
    assert TokenCalibrator(path).ratio_for("m") == 1.2575


def test_corrupt_or_out_of_range_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "ratios.json"
    path.write_text("{not json")
    with caplog.at_level(logging.WARNING):
        assert TokenCalibrator(path).ratios == {}
    assert "starting fresh" in caplog.text
    path.write_text(json.dumps({"a": 9, "b": -1, "c": 1.1}))
    assert TokenCalibrator(path).ratios == {"a": 2.5, "b": 1.0, "c": 1.1}


def _reference_segment_tokens(text: str) -> int:
    """The seed's description read literally: one alternation, first alternative wins, per-match rules."""
    import math
    import re

    from nomad_lab.core.jsstring import JS_WHITESPACE
    from nomad_lab.core.token_estimator import CJK_RANGES, WORD_CHARS, to_utf16_units

    pattern = re.compile(
        f"(?P<cjk>[{CJK_RANGES}])|(?P<word>[{WORD_CHARS}]+)|(?P<punct>[^{re.escape(JS_WHITESPACE)}{WORD_CHARS}{CJK_RANGES}]+)"
    )
    tokens = text.count("\n")
    for match in pattern.finditer(to_utf16_units(text)):
        length = len(match.group())
        if match.lastgroup == "punct":
            tokens += math.ceil(length / 2)
        elif length > 7:
            tokens += math.ceil(length / 7)
        else:
            tokens += 1
    return tokens


@given(st.text())
def test_fast_segmenter_equals_the_literal_alternation(text: str) -> None:
    expected = 0 if not text else max(1, _reference_segment_tokens(text))
    assert estimate_tokens(text) == expected
