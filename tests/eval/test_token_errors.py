"""promptTokenError per estimator, from an observation's real count and each estimator's count."""

from __future__ import annotations

import pytest

from nomad_lab.core.content_estimator import ContentEstimator
from nomad_lab.core.token_estimator import estimate_messages_tokens
from nomad_lab.eval.token_errors import estimator_counts, mean_token_errors, summary_line, token_errors

MESSAGES = [
    {"role": "system", "content": "| a | b |\n|---|---|\n| 1 | 2 |"},
    {"role": "user", "content": "hi"},
]


def test_counts_of_each_estimator_and_exact_only_for_a_local_gguf() -> None:
    counts = estimator_counts(MESSAGES, object())
    assert counts == {
        "segmenter": estimate_messages_tokens(MESSAGES),
        "content-aware": ContentEstimator().messages(MESSAGES),
    }


def test_errors_means_and_the_report_line() -> None:
    errors = token_errors(
        {"promptTokens": 50, "estimatorPromptTokens": {"segmenter": 40, "content-aware": 55}}
    )
    assert errors == {"segmenter": 0.2, "content-aware": 0.1}
    assert token_errors({"promptTokens": None, "estimatorPromptTokens": {"segmenter": 40}}) == {}
    means = mean_token_errors([errors, {"segmenter": 0.4}])
    assert means == {"segmenter": (pytest.approx(0.3), 2), "content-aware": (pytest.approx(0.1), 1)}
    assert summary_line(means) == "  token err by est.  segmenter 30.0%, content-aware 10.0%"
    assert summary_line({}) is None
