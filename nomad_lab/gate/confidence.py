"""The judge as a thresholded instrument: reject a set when P(true) < tau, with a floor or in a cascade.

Why thresholds on a probability: the small judges here say ``true`` to nearly every set, so their
verdicts gate nothing, but their P(true) can still rank sets. Sweeping tau gives the judge an operating
curve like a floor's, and sweeping (floor, tau) together gives a surface whose Pareto frontier says what
the two gates reach jointly. The calibrated pair is picked with a finite-sample guarantee (Learn then
Test): each (floor, tau) has an exact binomial p-value for "leak > alpha"; within a floor tau is tested
from the strictest down as a fixed sequence (stopping at the first cell not certified), and the floors
share the error budget by
Bonferroni, so every certified pair has leak <= alpha with 95% confidence simultaneously, and the one
with the best recall may be chosen among them.

The judge's P(true) is one number per pool (the set it read); a pool whose confidence is missing (NaN)
is kept: the judge fails open. Gate math only: arrays in, arrays out, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nomad_lab.gate import masks
from nomad_lab.gate.pools import PoolSet
from nomad_lab.gate.stats import CONFIDENCE, bootstrap_means

TAU_GRID = np.round(np.linspace(0.0, 1.0, 51), 2)


def confidence_gate(
    pools: PoolSet, p_true: Sequence[float] | np.ndarray, taus: Sequence[float]
) -> np.ndarray:
    """Keep mask (taus × pools × width): a pool is dropped when its P(true) < tau; NaN keeps it."""
    p = np.asarray(p_true, dtype=float)
    if p.shape != (pools.size,):
        raise ValueError(f"confidence_gate: expected {pools.size} confidences, got {p.shape}")
    t = np.asarray(taus, dtype=float).reshape(-1, 1)
    keep = np.isnan(p)[None] | (p[None] >= t)
    return keep[..., None] & pools.valid[None]


@dataclass(frozen=True)
class Surface:
    """Leak and recall@k over a (floor, tau) grid, with the per-pool indicators behind them."""

    floors: np.ndarray
    taus: np.ndarray
    leak: np.ndarray  # floors × taus
    recall: np.ndarray  # floors × taus (mean over answerable pools)
    leaked: np.ndarray  # floors × taus × refusal pools (bool)
    recall_per_pool: np.ndarray  # floors × taus × answerable pools

    def pareto(self) -> list[tuple[int, int]]:
        """Grid cells no other cell beats on both leak (lower) and recall (higher), by increasing leak."""
        if np.isnan(self.recall).all() or np.isnan(self.leak).all():
            return []  # one of the two axes is undefined (no answerable or no refusal question)
        cells = [(i, j) for i in range(self.floors.size) for j in range(self.taus.size)]
        front = []
        for i, j in cells:
            lk, rc = self.leak[i, j], self.recall[i, j]
            dominated = (self.leak <= lk) & (self.recall >= rc) & ((self.leak < lk) | (self.recall > rc))
            if not dominated.any():
                front.append((i, j))
        unique = {(float(self.leak[i, j]), float(self.recall[i, j])): (i, j) for i, j in sorted(front)}
        return [unique[key] for key in sorted(unique)]


def surface(
    pools: PoolSet,
    p_true: np.ndarray,
    floors: Sequence[float],
    taus: Sequence[float],
    k: int = masks.DEFAULT_K,
) -> Surface:
    """Floor then confidence gate at every (floor, tau); the judge's P(true) is read from ``p_true``."""
    floors, taus = np.asarray(floors, dtype=float), np.asarray(taus, dtype=float)
    by_tau = confidence_gate(pools, p_true, taus)
    refusal, answerable = pools.expect_refusal, pools.n_relevant > 0
    leak = np.zeros((floors.size, taus.size))
    recall = np.zeros((floors.size, taus.size))
    leaked = np.zeros((floors.size, taus.size, int(refusal.sum())), dtype=bool)
    per_pool = np.zeros((floors.size, taus.size, int(answerable.sum())))
    for i, floor in enumerate(floors):
        keep = masks.both(masks.score_floor(pools, [floor]), by_tau)
        r, nonempty = masks.evaluate(pools, keep, k)
        leaked[i] = nonempty[:, refusal]
        per_pool[i] = r[:, answerable]
        leak[i] = leaked[i].mean(axis=1) if refusal.any() else np.nan
        recall[i] = per_pool[i].mean(axis=1) if answerable.any() else np.nan
    return Surface(floors, taus, leak, recall, leaked, per_pool)


def binomial_p_value(events: int, trials: int, alpha: float) -> float:
    """Exact p-value of H0 "leak rate > alpha" after ``events`` leaks in ``trials`` (small = certified)."""
    from scipy import stats as sps  # heavy

    if trials <= 0:
        return 1.0
    return float(sps.binom.cdf(events, trials, alpha))


@dataclass(frozen=True)
class CalibratedPair:
    """The best-recall (floor, tau) certified to leak at most ``alpha`` (95%), or None with why not."""

    floor: float | None
    tau: float | None
    alpha: float
    leak: float | None
    recall: float | None
    certified: int
    message: str


def calibrated_pair(result: Surface, alpha: float, delta: float = 1 - CONFIDENCE) -> CalibratedPair:
    """Learn-then-Test over the surface: fixed sequence in tau within each floor, Bonferroni across floors.

    Assumes, like the calibrated floor, that the refusal questions are an exchangeable sample of the
    off-topic traffic; the guarantee covers leak only (recall is reported, not bounded).
    """
    n = result.leaked.shape[2]
    budget = delta / max(1, result.floors.size)
    certified: list[tuple[int, int]] = []
    for i in range(result.floors.size):
        # Fixed sequence: from the strictest tau down; stop at the first cell not certified.
        for j in np.argsort(-result.taus, kind="stable"):
            if binomial_p_value(int(result.leaked[i, j].sum()), n, alpha) > budget:
                break
            certified.append((i, int(j)))
    if not certified:
        return CalibratedPair(
            None,
            None,
            alpha,
            None,
            None,
            0,
            f"no (floor, tau) is certified to leak <= {alpha} on {n} refusal questions at 95% "
            f"(Bonferroni over {result.floors.size} floors)",
        )
    i, j = max(certified, key=lambda c: (result.recall[c], -result.taus[c[1]], -result.floors[c[0]]))
    leak, recall = float(result.leak[i, j]), float(result.recall[i, j])
    return CalibratedPair(
        float(result.floors[i]),
        float(result.taus[j]),
        alpha,
        leak,
        recall,
        len(certified),
        f"floor {result.floors[i]:.2f}, tau {result.taus[j]:.2f}: leak {leak:.3f} (certified <= {alpha} at "
        f"95%, {len(certified)} cells certified), recall@5 {recall:.3f}",
    )


def with_intervals(leaked: np.ndarray, recall_per_pool: np.ndarray) -> dict[str, float]:
    """Leak and recall of one operating point with 95% bootstrap intervals."""
    (lk,), (lk_lo,), (lk_hi,) = bootstrap_means(leaked.astype(float)[None])
    (rc,), (rc_lo,), (rc_hi,) = bootstrap_means(recall_per_pool[None])
    return {
        "leak": float(lk),
        "leak_lo": float(lk_lo),
        "leak_hi": float(lk_hi),
        "recall": float(rc),
        "recall_lo": float(rc_lo),
        "recall_hi": float(rc_hi),
    }


@dataclass(frozen=True)
class CascadeRow:
    """One (low, high) cascade at one tau: leak, recall@k and the judge calls it needs."""

    low: float
    high: float
    tau: float
    leak: float
    recall: float
    calls: int


def cascade(
    pools: PoolSet, p_true: np.ndarray, low: float, high: float, tau: float, k: int = masks.DEFAULT_K
) -> tuple[CascadeRow, np.ndarray, np.ndarray]:
    """Top score < low: drop the set; >= high: keep it unjudged; between: keep only if P(true) >= tau.

    The two thresholds read the pool's top final score (CRAG's Correct / Ambiguous / Incorrect); the
    judge is called only for the ambiguous band, so calls = pools in that band (with any candidate).
    Returns the row and the per-pool leak and recall indicators.
    """
    top = (
        np.where(pools.valid[:, 0], pools.score[:, 0], -np.inf)
        if pools.score.shape[1]
        else np.full(pools.size, -np.inf)
    )
    ambiguous = np.isfinite(top) & (top >= low) & (top < high)  # an empty pool is never judged
    p = np.asarray(p_true, dtype=float)
    judge_keeps = np.isnan(p) | (p >= tau)
    keep_pool = (top >= high) | (ambiguous & judge_keeps)
    keep = (keep_pool[:, None] & pools.valid)[None]
    r, nonempty = masks.evaluate(pools, keep, k)
    leaked = nonempty[0, pools.expect_refusal]
    recall = r[0, pools.n_relevant > 0]
    row = CascadeRow(low, high, tau, float(leaked.mean()), float(np.nanmean(recall)), int(ambiguous.sum()))
    return row, leaked, recall


def cascade_savings(
    pools: PoolSet, p_true: np.ndarray, tau: float, grid: Sequence[float], k: int = masks.DEFAULT_K
) -> tuple[CascadeRow, CascadeRow | None, list[CascadeRow]]:
    """Judging every set at ``tau`` against the cheapest cascade at equal (or better) leak and recall.

    Returns (judge-every-set row, cheapest matching cascade or None, every cascade tried).
    """
    everything, _, _ = cascade(pools, p_true, -np.inf, np.inf, tau, k)
    rows = [cascade(pools, p_true, lo, hi, tau, k)[0] for lo in grid for hi in grid if hi >= lo]
    matching = [
        r for r in rows if r.leak <= everything.leak + 1e-12 and r.recall >= everything.recall - 1e-12
    ]
    best = min(matching, key=lambda r: (r.calls, -r.recall, r.leak), default=None)
    return everything, best, rows


DELTA_GRID = np.round(np.arange(0.0, 0.301, 0.01), 2)


def best_at_recall(
    pools: PoolSet, keep: np.ndarray, labels: Sequence[str], min_recall: float, k: int = masks.DEFAULT_K
) -> dict[str, object] | None:
    """Among the operating points of ``keep`` (points × pools × width), the lowest-leak one whose mean
    recall@k is at least ``min_recall``, with 95% bootstrap intervals; None if none reaches it."""
    recall, nonempty = masks.evaluate(pools, keep, k)
    refusal, answerable = pools.expect_refusal, pools.n_relevant > 0
    mean_recall = recall[:, answerable].mean(axis=1)
    leak = nonempty[:, refusal].mean(axis=1)
    ok = mean_recall >= min_recall - 1e-12
    if not ok.any():
        return None
    i = int(np.argmin(np.where(ok, leak, np.inf)))
    return {"setting": labels[i], **with_intervals(nonempty[i, refusal], recall[i, answerable])}


def compositions(
    pools: PoolSet, p_true: np.ndarray, min_recall: float, k: int = masks.DEFAULT_K
) -> dict[str, dict[str, object] | None]:
    """The best point of each 2-core gate composition at the recall target: floor, contrast, the
    judge's P(true), and each of the first two followed by P(true)."""
    taus, floors, deltas = TAU_GRID, masks.FLOOR_GRID, DELTA_GRID
    by_tau = confidence_gate(pools, p_true, taus)
    floor_keep, contrast_keep = masks.score_floor(pools, floors), masks.contrast(pools, deltas)

    def product(first: np.ndarray) -> np.ndarray:
        return (first[:, None] & by_tau[None]).reshape(-1, *first.shape[1:])

    return {
        "floor": best_at_recall(pools, floor_keep, [f"floor {f:.2f}" for f in floors], min_recall, k),
        "contrast": best_at_recall(pools, contrast_keep, [f"delta {d:.2f}" for d in deltas], min_recall, k),
        "P(true)": best_at_recall(pools, by_tau, [f"tau {t:.2f}" for t in taus], min_recall, k),
        "floor + P(true)": best_at_recall(
            pools,
            product(floor_keep),
            [f"floor {f:.2f}, tau {t:.2f}" for f in floors for t in taus],
            min_recall,
            k,
        ),
        "contrast + P(true)": best_at_recall(
            pools,
            product(contrast_keep),
            [f"delta {d:.2f}, tau {t:.2f}" for d in deltas for t in taus],
            min_recall,
            k,
        ),
    }
