"""Statistics a reader can trust: bootstrap intervals, paired tests, and a calibrated floor.

Every rate is reported with a 95% interval. Intervals come from a seeded nonparametric bootstrap
over questions (≥2,000 resamples) whose resamples are shared across all operating points, so curves
are comparable point to point. Binomial bounds that must hold at zero observed events (a leak rate of
0/110 is not "certainly 0") use Clopper–Pearson instead of the bootstrap, which collapses there.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 1341
CONFIDENCE = 0.95


def _weights(n: int, resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(float)


def bootstrap_means(
    values: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and 95% percentile interval of each row of ``values`` (points × questions); NaN = undefined.

    The same resampled question sets are used for every row (paired across operating points).
    Rows with no defined value give NaN.
    """
    values = np.atleast_2d(np.asarray(values, dtype=float))
    defined = ~np.isnan(values)
    filled = np.where(defined, values, 0.0)
    n = values.shape[1]
    if n == 0:
        nan = np.full(values.shape[0], np.nan)
        return nan, nan, nan
    rng = np.random.default_rng(seed)
    block = max(1, min(resamples, 20_000_000 // max(1, n)))  # bound the weight matrix to ~160 MB
    boots = []
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(1) / defined.sum(1)
        for start in range(0, resamples, block):
            w = rng.multinomial(n, np.full(n, 1.0 / n), size=min(block, resamples - start)).astype(float)
            boots.append((filled @ w.T) / (defined.astype(float) @ w.T))  # points × block
        boot = np.concatenate(boots, axis=1)
        tail = (1 - CONFIDENCE) / 2 * 100
        with warnings.catch_warnings():  # a point with no defined value has no interval: NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            lo, hi = np.nanpercentile(boot, [tail, 100 - tail], axis=1)
    return mean, lo, hi


@functools.lru_cache(maxsize=1 << 14)
def clopper_pearson_upper(events: int, trials: int, confidence: float = CONFIDENCE) -> float:
    """One-sided exact upper confidence bound of a binomial proportion.

    Remembered: a preset floor's bootstrap asks it for the same few (events, trials) pairs hundreds of
    thousands of times, and each answer is a beta quantile that takes scipy tens of microseconds. The
    quantile is ``scipy.special``'s inverse incomplete beta, the very function ``scipy.stats.beta.ppf``
    answers with (equal to the last bit), without importing ``scipy.stats`` (over half a second).
    """
    from scipy.special import betaincinv  # heavy

    if trials <= 0:
        return 1.0
    if events >= trials:
        return 1.0
    return float(betaincinv(events + 1, trials - events, confidence))


@dataclass(frozen=True)
class PairedTest:
    """A paired comparison of gates A and B on the same questions."""

    statistic: float  # leak: B's minus A's leak rate; recall: mean of B minus A
    low: float
    high: float
    p_value: float
    n: int
    method: str


def mcnemar_exact(leaked_a: Sequence[bool], leaked_b: Sequence[bool]) -> PairedTest:
    """Exact McNemar test of two gates' leak indicators on the same refusal questions.

    Only discordant questions carry information; under H0 each goes either way with probability ½.
    The interval is the bootstrap interval of the paired difference in leak rate.
    """
    a, b = np.asarray(leaked_a, dtype=bool), np.asarray(leaked_b, dtype=bool)
    if a.shape != b.shape:
        raise ValueError("mcnemar_exact: both gates must be scored on the same questions")
    only_a, only_b = int((a & ~b).sum()), int((~a & b).sum())
    discordant = only_a + only_b
    from scipy import stats as sps  # heavy

    p = float(sps.binomtest(only_b, discordant, 0.5).pvalue) if discordant else 1.0
    diff, lo, hi = bootstrap_means((b.astype(float) - a.astype(float))[None])
    return PairedTest(float(diff[0]), float(lo[0]), float(hi[0]), p, int(a.size), "exact McNemar")


def paired_bootstrap(values_a: Sequence[float], values_b: Sequence[float]) -> PairedTest:
    """Paired bootstrap of mean(B − A) over questions defined for both (e.g. recall@5 per question).

    The two-sided p-value is twice the share of resampled differences on the far side of zero.
    """
    a, b = np.asarray(values_a, dtype=float), np.asarray(values_b, dtype=float)
    if a.shape != b.shape:
        raise ValueError("paired_bootstrap: both gates must be scored on the same questions")
    d = (b - a)[~(np.isnan(a) | np.isnan(b))]
    if d.size == 0:
        return PairedTest(float("nan"), float("nan"), float("nan"), 1.0, 0, "paired bootstrap")
    w = _weights(d.size, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)
    boot = w @ d / d.size
    lo, hi = np.percentile(boot, [2.5, 97.5])
    p = 1.0 if np.all(d == 0) else min(1.0, 2 * min(float((boot <= 0).mean()), float((boot >= 0).mean())))
    return PairedTest(float(d.mean()), float(lo), float(hi), p, int(d.size), "paired bootstrap")


@dataclass(frozen=True)
class CalibratedFloor:
    """The lowest floor whose leak upper bound is ≤ alpha, and what it costs in recall."""

    floor: float | None
    alpha: float
    leak: float | None
    leak_upper: float | None
    recall: float | None
    recall_at_zero: float | None
    loses_recall: bool
    message: str


def calibrated_floor(
    floors: np.ndarray,
    leaked: np.ndarray,
    recall: np.ndarray,
    alpha: float,
    recall_tolerance: float = 0.0,
) -> CalibratedFloor:
    """Pick the lowest floor whose one-sided 95% Clopper–Pearson upper bound on leak rate is ≤ ``alpha``.

    ``leaked`` is points × refusal questions (bool), ``recall`` points × questions (NaN = undefined).
    Assumptions: the refusal questions are an exchangeable sample of the off-topic traffic the gate
    will see (the bound says nothing about other kinds of question), and leak is non-increasing in
    the floor, so scanning floors upward and stopping at the first that passes is a fixed-sequence
    procedure that needs no multiplicity correction. "Loses recall" means mean recall@k at that floor
    is below the no-floor recall by more than ``recall_tolerance``.
    """
    floors = np.asarray(floors, dtype=float)
    leaked = np.asarray(leaked, dtype=bool)
    n = leaked.shape[1]
    recall_mean = np.nanmean(recall, axis=1) if np.asarray(recall).size else np.full(floors.size, np.nan)
    base = float(recall_mean[np.argmin(floors)]) if floors.size else None
    for i in np.argsort(floors, kind="stable"):
        events = int(leaked[i].sum())
        upper = clopper_pearson_upper(events, n)
        if upper <= alpha:
            r = float(recall_mean[i])
            loses = base is not None and r < base - recall_tolerance - 1e-12
            message = (
                f"floor {floors[i]:.2f}: leak {events}/{n} (95% upper bound {upper:.3f} <= {alpha}); "
                f"recall {r:.3f} vs {base:.3f} with no floor"
                + ("; this floor loses recall" if loses else "; no recall lost")
            )
            return CalibratedFloor(float(floors[i]), alpha, events / n, upper, r, base, loses, message)
    best = min((clopper_pearson_upper(int(row.sum()), n) for row in leaked), default=1.0)
    return CalibratedFloor(
        None,
        alpha,
        None,
        None,
        None,
        base,
        True,
        f"no floor reaches a leak upper bound of {alpha} on {n} refusal questions "
        f"(the best bound reachable is {best:.3f}); a score floor alone cannot meet this target",
    )
