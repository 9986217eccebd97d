"""Token estimation: a structural segmenter scaled by a per-model factor learned from real counts.

A fixed chars/N divisor errs 18–20% because tokenizers differ (Qwen splits ~26% finer than Llama) and
content differs (JSON and code are punctuation-dense). The seed segments text into words, CJK
characters and punctuation runs, then learns one factor per model by EWMA from the
``prompt_eval_count`` every response already returns (SPEC §3). Lengths are UTF-16 code units as in
the seed, so astral characters (emoji) cost what they cost there.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from nomad_lab.core.jsstring import JS_WHITESPACE, utf16_len

PUNCT_CHARS_PER_TOKEN = 2
LONG_WORD_CHARS = 7
CONVERSATION_OVERHEAD_TOKENS = 3
PER_MESSAGE_OVERHEAD_TOKENS = 4
ESTIMATE_SAFETY_MARGIN = 1.1
INGEST_CHARS_PER_TOKEN = 2

CALIBRATION_ALPHA = 0.25
MIN_CALIBRATION_RATIO = 0.5
MAX_CALIBRATION_RATIO = 2.5
MIN_CALIBRATION_ACTUAL_TOKENS = 32
PERSIST_DELTA = 0.02

CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
WORD_CHARS = "A-Za-z0-9\u00c0-\u024f"
# Astral characters are split into surrogates first (see to_utf16_units), so the punctuation class
# also matches surrogate code points, exactly as a non-unicode JS regex does.
_CJK_CHAR = re.compile(f"[{CJK_RANGES}]")
_WORD_RUN = re.compile(f"[{WORD_CHARS}]+")
_PUNCT_RUN = re.compile(f"[^{re.escape(JS_WHITESPACE)}{WORD_CHARS}{CJK_RANGES}]+")

log = logging.getLogger(__name__)


def to_utf16_units(text: str) -> str:
    if all(ord(ch) <= 0xFFFF for ch in text):
        return text
    units = []
    for ch in text:
        code = ord(ch)
        if code > 0xFFFF:
            code -= 0x10000
            units.append(chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF)))
        else:
            units.append(ch)
    return "".join(units)


def _segment_tokens(text: str) -> int:
    # The seed's single alternation (CJK char | word run | punctuation run) over three disjoint classes
    # finds the same maximal runs as three separate scans, which are much faster in Python. A word of
    # 1-7 characters costs ceil(len/7) = 1, so one formula covers both word rules.
    units = to_utf16_units(text)
    return (
        text.count("\n")
        + len(_CJK_CHAR.findall(units))
        + sum((len(run) + LONG_WORD_CHARS - 1) // LONG_WORD_CHARS for run in _WORD_RUN.findall(units))
        + sum(
            (len(run) + PUNCT_CHARS_PER_TOKEN - 1) // PUNCT_CHARS_PER_TOKEN
            for run in _PUNCT_RUN.findall(units)
        )
    )


def estimate_tokens(text: str, ratio: float = 1.0) -> int:
    """Estimated tokens of ``text``: 0 if empty, else at least 1 (SPEC §3.1).

    Punctuation runs cost one token per 2 characters, words longer than 7 characters one per 7,
    other words and single CJK characters one each, plus one per newline; then scaled by ``ratio``.
    """
    if not text:
        return 0
    return max(1, math.ceil(_segment_tokens(text) * ratio))


def message_content(message: object) -> str:
    """A chat message's text content (a mapping's or an object's ``content``), else empty."""
    value = message.get("content") if isinstance(message, Mapping) else getattr(message, "content", None)
    return value if isinstance(value, str) else ""


def messages_cost(messages: Iterable[object], count: Callable[[str], int]) -> int:
    """Prompt tokens of a chat by any text counter: 3 per conversation plus 4 per message plus each
    content's count (SPEC §3.2); the overheads are the seed's, whichever estimator counts the text."""
    items = list(messages)
    if not items:
        return 0
    return CONVERSATION_OVERHEAD_TOKENS + sum(
        count(message_content(m)) + PER_MESSAGE_OVERHEAD_TOKENS for m in items
    )


def estimate_messages_tokens(messages: Iterable[object], ratio: float = 1.0) -> int:
    """Estimated prompt tokens of a chat: 3 per conversation plus 4 per message plus each content.

    The ratio is applied per message (rounded up per message), never to the overheads, as in the seed.
    """
    return messages_cost(messages, lambda text: estimate_tokens(text, ratio))


def estimate_tokens_conservative(text: str, ratio: float = 1.0) -> int:
    """The estimate with the 10% safety margin the seed keeps for callers that must not overflow."""
    return math.ceil(estimate_tokens(text, ratio) * ESTIMATE_SAFETY_MARGIN)


def chars_per_token_estimate(text: str, chars_per_token: float) -> int:
    """The fixed-divisor baseline (chars/N) the segmenter replaced, for error studies."""
    return math.ceil(utf16_len(text) / chars_per_token) if text else 0


def clamp_ratio(value: object) -> float:
    """Non-finite or non-positive → 1; otherwise clamped into [0.5, 2.5]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 1.0
    if not math.isfinite(value) or value <= 0:
        return 1.0
    return float(min(MAX_CALIBRATION_RATIO, max(MIN_CALIBRATION_RATIO, value)))


def ewma(previous: float | None, observed: float, alpha: float = CALIBRATION_ALPHA) -> float:
    """Exponentially weighted mean; the first observation (no usable previous) is taken as is."""
    if previous is None or not math.isfinite(previous) or previous <= 0:
        return observed
    return previous * (1 - alpha) + observed * alpha


class TokenCalibrator:
    """Per-model factor k = actual ÷ uncalibrated estimate, learned by EWMA and kept in a JSON file.

    Observations with a missing or tiny (< 32) actual count are skipped: template overhead dominates
    small prompts. The file is rewritten only when a factor moved by more than 0.02 since it was last
    written, so a chat loop does not rewrite it every turn. A corrupt file starts fresh with a warning.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._ratios: dict[str, float] = {}
        self._written: dict[str, float] = {}
        if self.path is not None and self.path.exists():
            self._ratios = self._load(self.path)
            self._written = dict(self._ratios)

    @staticmethod
    def _load(path: Path) -> dict[str, float]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("top level is not an object")
        except (OSError, ValueError) as exc:
            log.warning("token calibration file %s is unreadable (%s); starting fresh", path, exc)
            return {}
        return {str(model): clamp_ratio(value) for model, value in data.items()}

    def ratio_for(self, model: str) -> float:
        """The learned factor for ``model``, or 1 when nothing was learned yet."""
        return self._ratios.get(model, 1.0)

    @property
    def ratios(self) -> dict[str, float]:
        return dict(self._ratios)

    def observe(self, model: str, estimated: int | None, actual: int | None) -> float | None:
        """Feed one response's counts; returns the new factor, or None if the observation was skipped."""
        if not estimated or not actual or estimated <= 0 or actual <= 0:
            return None
        if actual < MIN_CALIBRATION_ACTUAL_TOKENS:
            return None
        observed = clamp_ratio(actual / estimated)
        updated = clamp_ratio(ewma(self._ratios.get(model), observed))
        self._ratios[model] = updated
        last = self._written.get(model)
        if self.path is not None and (last is None or abs(updated - last) > PERSIST_DELTA):
            self._persist()
        return updated

    def _persist(self) -> None:
        assert self.path is not None
        payload = {model: round(value, 4) for model, value in sorted(self._ratios.items())}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=2)
        os.replace(tmp, self.path)
        self._written = dict(self._ratios)
