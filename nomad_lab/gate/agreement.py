"""How far the judge agrees with the labels: accuracy, Cohen's kappa, ROC AUC of P(true), calibration.

Gold labels come from the goldens, never from a model: a refusal golden's set is off topic (0); an
answerable golden whose judged set holds a relevant document is on topic (1); an answerable golden whose
set holds none is its own class (``NO_RELEVANT``, -1), reported apart, because "on topic but the answer is
not here" is exactly where a judge and a label may honestly disagree. Every figure has a 95% bootstrap
interval over questions (seeded, as in ``gate.stats``). Numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nomad_lab.gate.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE

OFF_TOPIC, ON_TOPIC, NO_RELEVANT = 0, 1, -1
ECE_BINS = 10


def accuracy(gold: np.ndarray, verdict: np.ndarray) -> float:
    return float(np.mean(gold == verdict)) if gold.size else float("nan")


def cohen_kappa(gold: np.ndarray, verdict: np.ndarray) -> float:
    """Agreement beyond chance between two binary labelings; NaN when chance agreement is total."""
    if gold.size == 0:
        return float("nan")
    observed = np.mean(gold == verdict)
    p_gold, p_verdict = np.mean(gold == 1), np.mean(verdict == 1)
    chance = p_gold * p_verdict + (1 - p_gold) * (1 - p_verdict)
    return float((observed - chance) / (1 - chance)) if chance < 1 else float("nan")


def roc_auc(gold: np.ndarray, score: np.ndarray) -> float:
    """P(score of a random on-topic set > that of a random off-topic set), ties counting half."""
    pos, neg = score[gold == 1], score[gold == 0]
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (pos.size * neg.size))


def reliability(gold: np.ndarray, p: np.ndarray, bins: int = ECE_BINS) -> list[tuple[float, float, int]]:
    """Per equal-width bin of P(true): (mean P(true), share on topic, count); empty bins left out."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = np.clip(np.digitize(p, edges[1:-1]), 0, bins - 1)
    return [
        (float(p[index == b].mean()), float(gold[index == b].mean()), int((index == b).sum()))
        for b in range(bins)
        if (index == b).any()
    ]


def expected_calibration_error(gold: np.ndarray, p: np.ndarray, bins: int = ECE_BINS) -> float:
    """Count-weighted mean |P(true) - observed on-topic share| over equal-width bins."""
    if gold.size == 0:
        return float("nan")
    return float(sum(n * abs(conf - share) for conf, share, n in reliability(gold, p, bins)) / gold.size)


METRICS = {
    "accuracy": lambda g, v, p: accuracy(g, v),
    "kappa": lambda g, v, p: cohen_kappa(g, v),
    "auc": lambda g, v, p: roc_auc(g, p),
    "ece": lambda g, v, p: expected_calibration_error(g, p),
}


@dataclass(frozen=True)
class Agreement:
    """Each metric as (value, low, high) over ``n`` labelled sets; ``n_with_p`` had a P(true)."""

    n: int
    n_with_p: int
    accuracy: tuple[float, float, float]
    kappa: tuple[float, float, float]
    auc: tuple[float, float, float]
    ece: tuple[float, float, float]
    accept_rate_on_topic: float
    accept_rate_off_topic: float


def agreement(
    gold: np.ndarray,
    verdict: np.ndarray,
    p_true: np.ndarray,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Agreement:
    """Agreement on the sets labelled on/off topic (``NO_RELEVANT`` and unjudged sets are left out).

    Accuracy and kappa use sets with a verdict; AUC and ECE use sets with a P(true).
    """
    gold, verdict, p = (np.asarray(a, dtype=float) for a in (gold, verdict, p_true))
    usable = (gold != NO_RELEVANT) & ~np.isnan(verdict)
    g, v, pp = gold[usable], verdict[usable], p[usable]
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, g.size, g.size) for _ in range(resamples)] if g.size else []
    out: dict[str, tuple[float, float, float]] = {}
    for name, metric in METRICS.items():
        needs_p = name in ("auc", "ece")
        keep = ~np.isnan(pp) if needs_p else np.ones(g.size, dtype=bool)
        value = metric(g[keep], v[keep], pp[keep])
        boots = np.array([metric(g[d][keep[d]], v[d][keep[d]], pp[d][keep[d]]) for d in draws])
        boots = boots[~np.isnan(boots)] if boots.size else boots
        tail = (1 - CONFIDENCE) / 2 * 100
        lo, hi = np.percentile(boots, [tail, 100 - tail]) if boots.size else (np.nan, np.nan)
        out[name] = (value, float(lo), float(hi))
    with np.errstate(invalid="ignore"):
        on = float(np.mean(v[g == ON_TOPIC] == 1)) if (g == ON_TOPIC).any() else float("nan")
        off = float(np.mean(v[g == OFF_TOPIC] == 1)) if (g == OFF_TOPIC).any() else float("nan")
    return Agreement(
        int(g.size), int((~np.isnan(pp)).sum()), **out, accept_rate_on_topic=on, accept_rate_off_topic=off
    )
