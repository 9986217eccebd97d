"""P(on_topic = true) from the model's own next-token distribution at the verdict position.

Why a probability and not just the verdict: the small judges that run here answer ``true`` to almost
every set, so as yes/no oracles they show no effect, yet their *preference* between ``true`` and
``false`` at the verdict token can still separate on-topic from off-topic sets. Reading it costs
nothing extra: every backend that reports token log-probabilities (llama.cpp logits, OpenAI
``logprobs``/``top_logprobs``, Ollama's native ``logprobs``) already computed it.

The confidence is ``p(true) / (p(true) + p(false))`` at the first token of the ``on_topic`` value,
summing every token variant of each word (``"true"``, ``" true"``, ``"True"``…) found among the
alternatives reported there. Grammar-constrained output may put a space after ``{`` or after ``:``,
so the position is found in the decoded text, never assumed. Where the numbers are missing, malformed
or the reply holds no decision token the confidence is None with a reason; it is never invented.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

TOP_LOGPROBS = 20
"""Alternatives asked for per position: Ollama's documented maximum (0–20), enough that the variant of
the word not chosen is almost always among them (its mass beyond rank 20 is below the 20th's)."""

NO_LOGPROBS = "no-logprobs"
MALFORMED = "malformed-logprobs"
NO_DECISION = "no-decision-token"

_VALUE_START = re.compile(r'"on_topic"\s*:\s*')


@dataclass(frozen=True)
class TokenChoice:
    """One generated token: its text, its log-probability, and the top alternatives at its position."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Confidence:
    """``p_true`` in [0, 1], or None with ``reason`` (one of the module's reason labels)."""

    p_true: float | None
    reason: str | None = None


def word_of(token: str) -> str | None:
    """``"true"``/``"false"`` if the token is a variant of that word (case, surrounding space), else None."""
    word = token.strip().lower()
    return word if word in ("true", "false") else None


def decision_index(tokens: Sequence[str]) -> int | None:
    """Index of the token holding the first character of the ``on_topic`` value, else None."""
    text = "".join(tokens)
    match = _VALUE_START.search(text)
    if match is None or match.end() >= len(text):
        return None
    offset = 0
    for i, token in enumerate(tokens):
        offset += len(token)
        if offset > match.end():
            return i
    return None


def _finite_logprob(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number <= 1e-6 else None


def _entry(item: object) -> tuple[str, float]:
    if not isinstance(item, Mapping):
        return "", math.nan
    token, logprob = item.get("token"), _finite_logprob(item.get("logprob"))
    return (token if isinstance(token, str) else ""), (math.nan if logprob is None else logprob)


def choices_from_wire(items: object) -> tuple[TokenChoice, ...] | None:
    """Ollama's ``logprobs`` list or OpenAI's ``choices[0].logprobs.content`` (the same shape: token,
    logprob, top_logprobs of token and logprob) as ``TokenChoice``s, without raising.

    None when the server sent none. Anything of the wrong shape or a non-finite or positive number
    becomes a NaN log-probability, which ``confidence_from_choices`` reports as malformed.
    """
    if items is None:
        return None
    if not isinstance(items, list):
        return (TokenChoice("", math.nan),)
    out = []
    for item in items:
        token, logprob = _entry(item)
        top = item.get("top_logprobs") if isinstance(item, Mapping) else None
        alternatives = tuple(_entry(alt) for alt in top) if isinstance(top, list) else ()
        if top is not None and not isinstance(top, list):
            alternatives = (("", math.nan),)
        out.append(TokenChoice(token, logprob, alternatives))
    return tuple(out)


def confidence_from_choices(choices: Sequence[TokenChoice] | None) -> Confidence:
    """The confidence of a judge reply whose tokens and per-position alternatives are ``choices``."""
    if not choices:
        return Confidence(None, NO_LOGPROBS)
    numbers = [c.logprob for c in choices] + [lp for c in choices for _, lp in c.top]
    if any(_finite_logprob(value) is None for value in numbers):
        return Confidence(None, MALFORMED)
    at = decision_index([c.token for c in choices])
    if at is None:
        return Confidence(None, NO_DECISION)
    chosen = choices[at]
    alternatives = {chosen.token: chosen.logprob, **dict(chosen.top)}
    mass = {"true": 0.0, "false": 0.0}
    for token, logprob in alternatives.items():
        word = word_of(token)
        if word is not None:
            mass[word] += math.exp(logprob)
    if word_of(chosen.token) is None or mass["true"] + mass["false"] <= 0.0:
        return Confidence(None, NO_DECISION)
    return Confidence(mass["true"] / (mass["true"] + mass["false"]))
