"""Prefill time as a fitted function of the tokens evaluated and the context they attend over.

Why: replaying whole conversations to time them measures the machine's load as much as the placement
(the same 163,610 prefilled tokens gave 1.40x, 2.16x and 2.34x on three runs). The tokens a turn
evaluates are exact (``core/prefix_cache``); what remains is what a prefill of ``n`` tokens after
``c`` cached ones costs on this backend. A planned sample of prefills at a few (``n``, ``c``) cells is
timed, the cost model fitted, and every turn's time read off it, with a bootstrap interval; more
rounds of the same sample are timed only while the interval of the quantity of interest is wider than
its target.

The model: ``ms = fixed + per_token * n + per_pair * n * (c + n / 2)``. The first two terms are a
call's overhead and the weights' work per token; the third is attention, where each evaluated token
at position ``p`` attends over ``p`` positions, so ``n`` tokens after ``c`` cached ones attend over
``n * c + n^2 / 2`` pairs. It is fitted by least squares on relative errors (timing noise scales with
the time), which is what the ratio of two turns needs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

TERMS = ("fixed", "per_token", "per_pair")
BOOTSTRAP = 2000


@dataclass(frozen=True)
class Point:
    """One timed prefill: ``evaluated`` tokens after ``context`` cached ones took ``ms``."""

    evaluated: int
    context: int
    ms: float
    cell: str = ""
    """The planned cell it was timed for (a label)."""


def features(evaluated: Any, context: Any) -> np.ndarray:
    """The model's design matrix for arrays (or scalars) of evaluated and context tokens."""
    n = np.asarray(evaluated, dtype=float)
    c = np.asarray(context, dtype=float)
    return np.stack([np.ones_like(n), n, n * (c + n / 2)], axis=-1)


def fit(points: Sequence[Point]) -> np.ndarray:
    """The three coefficients, least squares on relative error: each row weighted by 1 / its modelled
    ms (two reweighting passes from plain least squares). Weighting by the measured ms instead would
    pull the fit under every slow outlier; the bootstrap resamples around the same weights."""
    x = features([p.evaluated for p in points], [p.context for p in points])
    y = np.array([p.ms for p in points])
    return _weighted(x, y)


def _weighted(x: np.ndarray, y: np.ndarray, passes: int = 2) -> np.ndarray:
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    for _ in range(passes):
        w = 1.0 / np.maximum(x @ coef, 1e-3 * max(float(y.max()), 1e-9))
        coef, *_ = np.linalg.lstsq(x * w[:, None], y * w, rcond=None)
    return coef


def predict(coef: np.ndarray, evaluated: Any, context: Any) -> np.ndarray:
    """Modelled ms: one value per coefficient row (a fit, or every bootstrap draw at once)."""
    return coef @ features(evaluated, context).T


def bootstrap(points: Sequence[Point], seed: int = 0, resamples: int = BOOTSTRAP) -> np.ndarray:
    """Coefficients refitted on ``resamples`` residual-bootstrap samples: each point's modelled ms
    times one plus a relative residual drawn with replacement (inflated by ``sqrt(n / (n - p))`` for
    the fitted terms), so the interval reflects how far the timings scatter around the model."""
    rng = np.random.default_rng(seed)
    coef = fit(points)
    x = features([p.evaluated for p in points], [p.context for p in points])
    fitted = x @ coef
    y = np.array([p.ms for p in points])
    rel = y / fitted - 1
    rel *= np.sqrt(len(points) / max(len(points) - len(TERMS), 1))
    out = np.empty((resamples, len(TERMS)))
    for b in range(resamples):
        out[b] = _weighted(x, fitted * (1 + rng.choice(rel, size=len(points), replace=True)), passes=1)
    return out


def interval(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap samples."""
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class Fit:
    """A fitted cost model, its bootstrap coefficients, and what it says about given turns."""

    points: tuple[Point, ...]
    coef: np.ndarray
    draws: np.ndarray

    @classmethod
    def of(cls, points: Sequence[Point], seed: int = 0) -> Fit:
        return cls(tuple(points), fit(points), bootstrap(points, seed))

    def ms(self, evaluated: int, context: int) -> tuple[float, float, float]:
        """Modelled ms of one prefill, with its 95% interval."""
        value = float(predict(self.coef, evaluated, context))
        return (value, *interval(predict(self.draws, evaluated, context)))

    def ratio(self, a: tuple[int, int], b: tuple[int, int]) -> tuple[float, float, float]:
        """Modelled ms of prefill ``a`` over prefill ``b`` (each ``(evaluated, context)``), with its
        95% interval from the same bootstrap draws (so the shared uncertainty cancels)."""
        value = float(predict(self.coef, *a) / predict(self.coef, *b))
        return (value, *interval(predict(self.draws, *a) / predict(self.draws, *b)))

    def residuals(self) -> list[float]:
        """Each timed point's relative error under the model: measured / modelled - 1."""
        return [p.ms / float(predict(self.coef, p.evaluated, p.context)) - 1 for p in self.points]

    def summary(self) -> dict[str, Any]:
        low_high = [interval(self.draws[:, i]) for i in range(len(TERMS))]
        rel = np.abs(self.residuals())
        return {
            "model": "ms = fixed + per_token * n + per_pair * n * (c + n / 2)",
            "coefficients": {
                t: {"value": float(v), "low": lh[0], "high": lh[1]}
                for t, v, lh in zip(TERMS, self.coef, low_high, strict=True)
            },
            "points": len(self.points),
            "median_abs_residual": float(np.median(rel)),
            "max_abs_residual": float(rel.max()),
        }


def design(max_evaluated: int, max_context: int, small: int = 128) -> list[tuple[int, int]]:
    """The planned cells: three evaluated-token counts (small, half, the largest a turn evaluates) at
    no context and at the largest context a turn reuses, so the turns' (n, c) lie inside the design."""
    sizes = sorted({small, max(small, max_evaluated // 2), max(small, max_evaluated)})
    return [(n, c) for c in sorted({0, max_context}) for n in sizes]


def sample_until(
    time_round: Callable[[int], list[Point]],
    headline: Callable[[Fit], tuple[float, float, float]],
    *,
    target: float,
    min_rounds: int = 1,
    max_rounds: int = 6,
    over_budget: Callable[[], bool] = lambda: False,
) -> tuple[Fit, int]:
    """Timed rounds of the planned sample until ``headline``'s 95% interval is within ``target``
    (relative half-width) of its value: at least ``min_rounds``, at most ``max_rounds``, no new round
    once ``over_budget()``. Returns the final fit and the rounds timed."""
    points: list[Point] = []
    rounds = 0
    while rounds < max_rounds:
        if rounds >= min_rounds:
            value, low, high = headline(Fit.of(points))
            if (high - low) / 2 <= target * value or over_budget():
                break
        points += time_round(rounds)
        rounds += 1
    return Fit.of(points), rounds
