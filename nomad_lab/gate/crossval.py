"""Out-of-fold figures for gates: grouped, stratified, repeated folds; thresholds picked on training folds.

Why all of it: at recall@5 >= 0.90 one refusal moves a leak rate by about a point, so a figure from one
split, or from a threshold picked on the questions it is scored on, says little. Here:

- **groups**: near-duplicate questions (query-embedding cosine >=
  :data:`~nomad_lab.gate.folds.NEAR_DUPLICATE`) and refusals that share a tag family (the same tag
  set) always fall in the same fold, so a test fold holds kinds of off-topic question its training
  folds never saw (the case a deployed gate meets);
- **repeats**: ``REPEATS`` × ``FOLDS``-fold StratifiedGroupKFold with different seeds; figures are means
  over repeats, intervals a bootstrap over questions of each question's repeat-averaged outcome;
- **thresholds inside training folds**: every operating point is chosen on the training questions
  only (a learned gate's from inner out-of-fold scores, since in-sample training scores are overfitted):
  the strictest point whose recall@5 >= the target, and the point with the best recall whose leak's
  one-sided 95% Clopper–Pearson upper bound is <= alpha (Learn-then-Test's fixed-sequence bound, as the
  calibrated floor does). The test fold is scored at that point.

The folds themselves (groups, repeated splits) are :mod:`nomad_lab.gate.folds`, re-exported here where
every study has always asked for them; this module is what is scored on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nomad_lab.gate.folds import Split as Split
from nomad_lab.gate.folds import answerable_folds as answerable_folds
from nomad_lab.gate.folds import fold_matrix as fold_matrix
from nomad_lab.gate.folds import question_groups as question_groups
from nomad_lab.gate.folds import repeated_splits as repeated_splits
from nomad_lab.gate.stats import BOOTSTRAP_SEED, bootstrap_means, clopper_pearson_upper

RECALL_TARGET = 0.90
LEAK_TARGET = 0.05
FOLDS = 5
REPEATS = 5
INNER_FOLDS = 3
AUC_RESAMPLES = 1000


def choose_points(
    recall: np.ndarray, nonempty: np.ndarray, refusal: np.ndarray, target: float, alpha: float
) -> tuple[int | None, int | None]:
    """On training questions: (the point meeting recall >= target with the least leak, ties to more
    recall; the point with the best recall whose leak upper bound is <= alpha). None: none qualifies.

    ``recall`` and ``nonempty`` are points × questions; recall is NaN where undefined (refusals).
    """
    with np.errstate(invalid="ignore"):
        mean_recall = np.nan_to_num(np.nanmean(recall, axis=1), nan=0.0) if recall.size else np.zeros(0)
    leaks = nonempty[:, refusal].sum(axis=1)
    n_ref = int(refusal.sum())
    meets = np.flatnonzero(mean_recall >= target - 1e-12)
    by_recall = None
    if meets.size:
        by_recall = int(meets[np.lexsort((-mean_recall[meets], leaks[meets]))[0]])
    bounds = {int(e): clopper_pearson_upper(int(e), n_ref) for e in np.unique(leaks)}
    upper = np.array([bounds[int(e)] for e in leaks])
    safe = np.flatnonzero(upper <= alpha)
    by_leak = int(safe[np.argmax(mean_recall[safe])]) if safe.size else None
    return by_recall, by_leak


def threshold_grid(scores: np.ndarray, base_recall: np.ndarray, base_nonempty: np.ndarray):
    """An all-or-nothing score as a grid: thresholds (every distinct score, and +inf: keep nothing),
    and the recall and non-emptiness matrices at each."""
    thresholds = np.append(np.unique(scores), np.inf)
    kept = scores[None, :] >= thresholds[:, None]
    return (
        thresholds,
        np.where(kept, base_recall[None], np.where(np.isnan(base_recall), np.nan, 0.0)),
        (kept & base_nonempty[None]),
    )


def pooled_threshold(
    oof: np.ndarray,
    base_recall: np.ndarray,
    base_nonempty: np.ndarray,
    refusal: np.ndarray,
    target: float = RECALL_TARGET,
) -> float:
    """The threshold a gate fitted out of fold is saved with: its out-of-fold scores (repeats x
    questions) averaged over repeats, and on their grid the least-leaking threshold whose recall (or
    answerable keep) reaches ``target``; ``-inf`` (keep every question) when none does.

    Why here: the answerability and sufficiency studies save their fine-tuned gate from the same pooled
    scores by the same rule, the one :func:`choose_points` applies inside each fold."""
    thresholds, rec, ne = threshold_grid(np.nanmean(oof, axis=0), base_recall, base_nonempty)
    at, _ = choose_points(rec, ne, refusal, target, LEAK_TARGET)
    return float(thresholds[at]) if at is not None else float("-inf")


@dataclass(frozen=True)
class Figures:
    """Out-of-fold figures of one gate. Each triple is (mean over repeats, 95% low, 95% high)."""

    leak_at_recall: tuple[float, float, float]
    recall_at_recall: tuple[float, float, float]
    recall_at_leak: tuple[float, float, float] | None
    leak_at_leak: tuple[float, float, float] | None
    auc: tuple[float, float, float] | None
    reached: float  # share of folds where a point met the recall target on the training questions
    folds: int
    repeats: int
    extra: dict = field(default_factory=dict)


def _rate(per_repeat: np.ndarray) -> tuple[float, float, float]:
    """Mean over repeats, with a bootstrap interval over questions of each question's average."""
    per_question = np.nanmean(per_repeat, axis=0)
    _, lo, hi = bootstrap_means(per_question[None])
    return float(np.nanmean(np.nanmean(per_repeat, axis=1))), float(lo[0]), float(hi[0])


def roc_auc(scores: np.ndarray, on_topic: np.ndarray) -> float:
    """Mann–Whitney ROC AUC of ``scores`` for on-topic (NaN scores rank lowest)."""
    from scipy.stats import rankdata  # heavy

    s = np.nan_to_num(np.asarray(scores, dtype=float), nan=-np.inf)
    pos, neg = int(on_topic.sum()), int((~on_topic).sum())
    if not pos or not neg:
        return float("nan")
    ranks = rankdata(s)
    return float((ranks[on_topic].sum() - pos * (pos + 1) / 2) / (pos * neg))


def auc_interval(scores: np.ndarray, on_topic: np.ndarray) -> tuple[float, float, float]:
    """ROC AUC of each repeat's out-of-fold scores (rows), mean, and a question bootstrap interval.

    A resample weights each question by how often it was drawn, so its AUC is ``w_pos @ C @ w_neg``
    over the pairwise win matrix C (1 win, ½ tie): one matrix product per repeat for all resamples.
    """
    scores = np.nan_to_num(np.atleast_2d(np.asarray(scores, dtype=float)), nan=-np.inf)
    if not on_topic.any() or on_topic.all():
        return float("nan"), float("nan"), float("nan")
    point = float(np.mean([roc_auc(row, on_topic) for row in scores]))
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    n = on_topic.size
    weights = rng.multinomial(n, np.full(n, 1.0 / n), size=AUC_RESAMPLES).astype(float)
    wp, wn = weights[:, on_topic], weights[:, ~on_topic]
    total = np.zeros(AUC_RESAMPLES)
    with np.errstate(invalid="ignore", divide="ignore"):  # a resample missing a class has no AUC
        for row in scores:
            sp, sn = row[on_topic][:, None], row[~on_topic][None, :]
            wins = (sp > sn) + 0.5 * (sp == sn)
            total += ((wp @ wins) * wn).sum(axis=1) / (wp.sum(1) * wn.sum(1))
        lo, hi = np.nanpercentile(total / len(scores), [2.5, 97.5])
    return point, float(lo), float(hi)


def grid_figures(
    recall: np.ndarray,
    nonempty: np.ndarray,
    refusal: np.ndarray,
    splits: list[Split],
    score: np.ndarray | None = None,
    target: float = RECALL_TARGET,
    alpha: float = LEAK_TARGET,
) -> Figures:
    """Out-of-fold figures of a gate with a fixed grid of operating points (floor, contrast, judge τ)."""
    figures = _figures(refusal, splits, recall, nonempty, score, target, alpha)
    if score is not None:
        figures.extra["score"] = np.broadcast_to(np.asarray(score, dtype=float), (len(splits), refusal.size))
    return figures


def _inner_choice(
    inner_scores: dict[Any, np.ndarray],
    recall: np.ndarray,
    nonempty: np.ndarray,
    refusal: np.ndarray,
    target: float,
) -> Any:
    """The setting whose inner out-of-fold scores leak least at the recall target (ties: higher AUC)."""
    best = None
    for choice, scores in inner_scores.items():
        _, rec, ne = threshold_grid(scores, recall, nonempty)
        p_recall, _ = choose_points(rec, ne, refusal, target, 1.0)
        leak = ne[p_recall, refusal].mean() if p_recall is not None and refusal.any() else 1.0
        key = (leak, -roc_auc(scores, ~refusal))
        if best is None or key < best[0]:
            best = (key, choice)
    return best[1]  # type: ignore[index]


def learned_figures(
    fit_score: Callable[[np.ndarray, np.ndarray, Any], np.ndarray],
    labels: np.ndarray,
    groups: np.ndarray,
    base_recall: np.ndarray,
    base_nonempty: np.ndarray,
    splits: list[Split],
    target: float = RECALL_TARGET,
    alpha: float = LEAK_TARGET,
    seed: int = BOOTSTRAP_SEED,
    choices: Sequence[Any] = (None,),
    also: np.ndarray | None = None,
    choose_on: np.ndarray | None = None,
) -> tuple[Figures, np.ndarray, list[Any]]:
    """Out-of-fold figures of a learned all-or-nothing gate, its out-of-fold scores (repeats × n) and
    the setting chosen in each outer fold; ``figures.extra["kept"]`` holds the held-out keep decisions
    at the recall point (repeats × n). ``also``: indices past the labelled ones (unlabelled rows, such
    as pseudo-questions) scored in every outer fold exactly as its held-out fold is, one row per outer
    fold in ``figures.extra["also"]`` (folds in split order × len(also)).

    ``fit_score(train_index, score_index, choice)`` fits on the training questions with one of
    ``choices`` (e.g. a regularization strength) and returns the scores of the others. Inside each
    outer training fold, inner out-of-fold scores pick the choice (least leak at the recall target)
    and then the operating thresholds. The held-out fold is scored by the mean of the same inner
    models (cross-fitting), not by one model refitted on the whole training fold: a threshold holds
    only on the scale of the scores it was chosen on, and a model fitted on more questions spreads its
    scores wider (a logistic model's weights grow), so a refitted model's scores at the inner threshold
    kept fewer answerable questions than chosen and every fitted row fell short of the recall target.
    ``choose_on`` (a mask over questions): the refusals whose leak picks the choice (default: all), so a
    topicality fit chooses on off-topic refusals only.
    """
    refusal = ~labels.astype(bool)
    chooser = refusal if choose_on is None else refusal & choose_on
    repeats = len(splits)
    n = labels.size
    oof = np.full((repeats, n), np.nan)
    keep_r = np.zeros((repeats, n), dtype=bool)
    keep_l = np.zeros((repeats, n), dtype=bool)
    also = np.zeros(0, dtype=int) if also is None else np.asarray(also, dtype=int)
    also_scores = []
    reached, found, chosen = [], [], []
    for r, split in enumerate(splits):
        for train, test in split:
            inner = repeated_splits(labels[train], groups[train], INNER_FOLDS, 1, seed + 1000 * (r + 1))[0]
            inner_scores = {c: np.full(train.size, np.nan) for c in choices}
            held_out = {c: np.zeros(test.size + also.size) for c in choices}
            for choice, scores in inner_scores.items():
                for itr, ite in inner:
                    both = fit_score(train[itr], np.concatenate([train[ite], test, also]), choice)
                    scores[ite] = both[: ite.size]
                    held_out[choice] += both[ite.size :] / len(inner)
            choice = _inner_choice(
                inner_scores, base_recall[train], base_nonempty[train], chooser[train], target
            )
            chosen.append(choice)
            thresholds, rec, ne = threshold_grid(
                inner_scores[choice], base_recall[train], base_nonempty[train]
            )
            p_recall, p_leak = choose_points(rec, ne, refusal[train], target, alpha)
            oof[r, test] = held_out[choice][: test.size]
            also_scores.append(held_out[choice][test.size :])
            reached.append(p_recall is not None)
            found.append(p_leak is not None)
            keep_r[r, test] = oof[r, test] >= (thresholds[p_recall] if p_recall is not None else -np.inf)
            keep_l[r, test] = oof[r, test] >= (thresholds[p_leak] if p_leak is not None else np.inf)
    auc = auc_interval(oof, ~refusal)
    figures = decision_figures(
        keep_r, keep_l, base_recall, base_nonempty, refusal, auc, reached, found, splits
    )
    figures.extra["kept"] = keep_r
    figures.extra["score"] = oof
    figures.extra["also"] = np.array(also_scores)
    return figures, oof, chosen


def _figures(
    refusal: np.ndarray,
    splits: list[Split],
    recall: np.ndarray,
    nonempty: np.ndarray,
    score: np.ndarray | None,
    target: float,
    alpha: float,
) -> Figures:
    repeats, n = len(splits), refusal.size
    keep_r = np.zeros((repeats, n), dtype=int)
    keep_l = np.full((repeats, n), -1, dtype=int)
    reached, found = [], []
    for r, split in enumerate(splits):
        for train, test in split:
            p_recall, p_leak = choose_points(
                recall[:, train], nonempty[:, train], refusal[train], target, alpha
            )
            reached.append(p_recall is not None)
            found.append(p_leak is not None)
            keep_r[r, test] = p_recall if p_recall is not None else 0
            keep_l[r, test] = p_leak if p_leak is not None else -1
    columns = np.arange(n)[None].repeat(repeats, 0)
    rec_r = recall[keep_r, columns]
    ne_r = nonempty[keep_r, columns]
    rec_l = np.where(keep_l >= 0, recall[np.maximum(keep_l, 0), columns], np.where(refusal, np.nan, 0.0))
    ne_l = (keep_l >= 0) & nonempty[np.maximum(keep_l, 0), columns]
    auc = None if score is None else auc_interval(score, ~refusal)
    return _finish(rec_r, ne_r, rec_l, ne_l, refusal, reached, found, splits, auc)


def decision_figures(
    keep_r: np.ndarray,
    keep_l: np.ndarray | None,
    base_recall: np.ndarray,
    base_nonempty: np.ndarray,
    refusal: np.ndarray,
    auc: tuple[float, float, float] | None,
    reached: list[bool] | None = None,
    found: list[bool] | None = None,
    splits: list[Split] | None = None,
) -> Figures:
    """Figures of all-or-nothing keep decisions (repeats × questions) at the recall and the leak point;
    ``keep_l`` None: no leak point. Also used for a gate fitted elsewhere (one "repeat", no folds)."""
    keep_r = np.atleast_2d(keep_r)
    zero = np.where(np.isnan(base_recall), np.nan, 0.0)
    rec_r = np.where(keep_r, base_recall[None], zero[None])
    ne_l = None if keep_l is None else np.atleast_2d(keep_l) & base_nonempty[None]
    rec_l = None if keep_l is None else np.where(np.atleast_2d(keep_l), base_recall[None], zero[None])
    return _finish(
        rec_r,
        keep_r & base_nonempty[None],
        rec_l,
        ne_l,
        refusal,
        reached if reached is not None else [True],
        found if found is not None else [keep_l is not None],
        splits or [[]],
        auc,
    )


def point_figures(
    recall: np.ndarray, nonempty: np.ndarray, refusal: np.ndarray, score: np.ndarray | None
) -> Figures:
    """Figures of one fixed operating point on every question (nothing chosen, so nothing to hold out)."""
    auc = None if score is None else auc_interval(score, ~refusal)
    return _finish(recall[None], nonempty[None], None, None, refusal, [True], [False], [[]], auc)


def _finish(rec_r, ne_r, rec_l, ne_l, refusal, reached, found, splits, auc) -> Figures:
    answerable = ~np.isnan(rec_r[0])
    passed = np.asarray(ne_r, dtype=bool)
    leak_r = _rate(passed[:, refusal].astype(float))
    recall_r = _rate(rec_r[:, answerable])
    any_found = any(found)
    return Figures(
        leak_at_recall=leak_r,
        recall_at_recall=recall_r,
        recall_at_leak=_rate(rec_l[:, answerable]) if any_found and rec_l is not None else None,
        leak_at_leak=_rate(ne_l[:, refusal].astype(float)) if any_found and ne_l is not None else None,
        auc=auc,
        reached=float(np.mean(reached)) if reached else 0.0,
        folds=len(splits[0]),
        repeats=len(splits),
        extra={
            "leak_point_found": float(np.mean(found)) if found else 0.0,
            # per question, averaged over repeats: paired tests and per-tag leak read these
            "leaked": np.where(refusal, ne_r.mean(axis=0), np.nan),
            "recall": np.where(answerable, np.nan_to_num(rec_r).mean(axis=0), np.nan),
            # per repeat and question: does context reach the prompt at the recall point, in which fold
            "passed": passed,
            "fold": fold_matrix(splits, refusal.size, passed.shape[0]),
        },
    )


def kind_figures(figures: Figures, kinds: np.ndarray, names: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """Per refusal kind present (in the order of ``names``, else of first appearance): its n, its pass
    rate at the recall point (:func:`pass_rate`) and, where the gate scores questions, the ROC AUC of
    answerable questions against that kind alone. ``kinds`` holds "" for answerable questions."""
    kinds = np.asarray(kinds, dtype=object)
    order = [k for k in names if (kinds == k).any()] or [k for k in dict.fromkeys(kinds) if k]
    score = figures.extra.get("score")
    answerable = kinds == ""
    out: dict[str, dict[str, Any]] = {}
    for kind in order:
        mask = kinds == kind
        rate = pass_rate(figures, mask)
        out[kind] = {"n": int(mask.sum()), "passAtRecallTarget": None if rate is None else list(rate)}
        if score is not None and answerable.any():
            both = answerable | mask
            out[kind]["rocAuc"] = list(auc_interval(score[:, both], answerable[both]))
    return out


def pass_rate(figures: Figures, mask: np.ndarray) -> tuple[float, float, float] | None:
    """The share of the questions in ``mask`` whose context passes at the recall point (mean over
    repeats, bootstrap interval over questions), or None when ``mask`` is empty.

    On refusals of one kind this is that kind's leak (off-topic) or pass rate (unanswerable,
    near-domain): the same operating point as the row's headline, split, never blended."""
    mask = np.asarray(mask, dtype=bool)
    if not mask.any():
        return None
    return _rate(figures.extra["passed"][:, mask].astype(float))
