"""Response-style sampler profiles (SPEC §7.5) as chat options.

Why they exist here: the generation tier defaults to greedy decoding (temperature 0, seed 42), under
which min_p, top_p and top_k are inert, so a style is only measurable when asked for by name; ``off``
(no samplers, no temperature) is the control a style is compared against. The eval sends the preset as
is: modelfile-declared samplers are NOT merged into ``auto`` there (the reference's chat path merges
them; its generation tier does not), so a run measures the preset, not whatever the backend declares.
Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["RESPONSE_STYLES", "SAMPLER_PROFILES", "SamplerProfile", "style_options"]


@dataclass(frozen=True)
class SamplerProfile:
    """One preset; ``compat_top_p`` replaces ``top_p`` on the OpenAI-compatible path (no min_p/top_k)."""

    temperature: float
    top_p: float
    top_k: int
    min_p: float
    repeat_penalty: float
    compat_top_p: float


SAMPLER_PROFILES: dict[str, SamplerProfile] = {
    "auto": SamplerProfile(0.6, 1.0, 40, 0.05, 1.1, 0.9),
    "focused": SamplerProfile(0.2, 1.0, 40, 0.1, 1.05, 0.85),
    "creative": SamplerProfile(1.0, 1.0, 100, 0.03, 1.15, 0.95),
}
RESPONSE_STYLES = ("auto", "focused", "creative", "off")
DETERMINISTIC = {"temperature": 0.0}


def style_options(style: str | None, *, openai_path: bool = False) -> dict[str, Any]:
    """``ChatOptions`` keyword arguments for a style; None is the deterministic default (temperature 0).

    ``off`` sends neither samplers nor a temperature (the backend's own defaults apply).
    """
    if style is None:
        return dict(DETERMINISTIC)
    if style == "off":
        return {}
    if style not in SAMPLER_PROFILES:
        raise ValueError(f"unknown response style {style!r}; expected one of {', '.join(RESPONSE_STYLES)}")
    p = SAMPLER_PROFILES[style]
    return {
        "temperature": p.temperature,
        "top_p": p.compat_top_p if openai_path else p.top_p,
        "top_k": p.top_k,
        "min_p": p.min_p,
        "repeat_penalty": p.repeat_penalty,
    }
