"""The model-call boundary: what every chat call of the services shares, whatever it is for.

A call's real prompt count feeds the ``TokenCalibrator`` against the uncalibrated estimate of the exact
messages sent (how the per-model factor k of SPEC §3.3 is learned), and a failed call is labelled the
same way for the judge, the rewrite and the answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nomad_lab.backends.base import BackendError, Usage
from nomad_lab.core.estimator import TokenCalibrator, estimate_messages_tokens

__all__ = ["failure_reason", "feed_calibrator"]


def feed_calibrator(
    calibrator: TokenCalibrator | None, model: str, messages: Sequence[Mapping[str, Any]], usage: Usage | None
) -> float | None:
    """Feed one call's real prompt count against the uncalibrated estimate of the exact messages sent.

    Missing counts are skipped (older Ollama omitted ``prompt_eval_count`` on cached prompts; some
    OpenAI-compatible streams carry no usage); the calibrator itself skips tiny prompts.
    """
    if calibrator is None or usage is None or usage.prompt_tokens is None:
        return None
    return calibrator.observe(model, estimate_messages_tokens(messages, 1.0), usage.prompt_tokens)


def failure_reason(exc: BaseException) -> str:
    """A short label for a failed call: the backend's own reason, else the exception type."""
    if isinstance(exc, BackendError):
        return exc.reason
    if isinstance(exc, TimeoutError):
        return "timeout"
    return f"error:{type(exc).__name__}"
