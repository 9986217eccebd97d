"""promptTokenError for each estimator: the seed's segmenter, the content-aware one, the exact mode.

Why: the reference's ``promptTokenError`` measures only the seed's uncalibrated segmenter. The planner
can now take any of three estimators, so the generation eval reports each one's error against the
backend's real prompt count on the very prompts it sent. The content-aware estimator is measured
uncalibrated (factors 1), like the seed's figure; the exact mode only when the chat model is a local
GGUF (the embedded backend), where its error on the content is 0 and what remains is chat-template
overhead the seed's +3/+4 constants approximate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nomad_lab.backends.exact_tokens import ExactEstimator
from nomad_lab.core.content_estimator import ContentEstimator
from nomad_lab.core.generation_metrics import prompt_token_error
from nomad_lab.core.token_estimator import estimate_messages_tokens

ESTIMATOR_NAMES = ("segmenter", "content-aware", "exact")


def estimator_counts(messages: Sequence[Mapping[str, Any]], backend: object) -> dict[str, int]:
    """Each available estimator's count of ``messages`` (``exact`` only for a local GGUF backend)."""
    counts = {
        "segmenter": estimate_messages_tokens(messages, 1.0),
        "content-aware": ContentEstimator().messages(messages),
    }
    path = getattr(backend, "path", None)
    if getattr(backend, "kind", None) == "embedded" and path is not None:
        counts["exact"] = ExactEstimator(path).messages(messages)
    return counts


def token_errors(observation: Mapping[str, Any]) -> dict[str, float]:
    """|real − estimate| / real per estimator for one observation (empty without a real count)."""
    real = observation.get("promptTokens")
    counts = observation.get("estimatorPromptTokens") or {}
    errors = {name: prompt_token_error(real, count) for name, count in counts.items()}
    return {name: error for name, error in errors.items() if error is not None}


def mean_token_errors(per_case: Iterable[Mapping[str, float]]) -> dict[str, tuple[float, int]]:
    """(mean error, cases) per estimator over the cases that measured it."""
    sums: dict[str, list[float]] = {}
    for errors in per_case:
        for name, error in errors.items():
            sums.setdefault(name, []).append(error)
    return {name: (sum(values) / len(values), len(values)) for name, values in sums.items()}


def summary_line(means: Mapping[str, tuple[float, int]]) -> str | None:
    """One report line: each estimator's mean promptTokenError, in ``ESTIMATOR_NAMES`` order."""
    parts = [f"{name} {means[name][0] * 100:.1f}%" for name in ESTIMATOR_NAMES if name in means]
    return "  token err by est.  " + ", ".join(parts) if parts else None
