"""Out-of-fold figures are out of fold: planted leakage checks, groups that never straddle folds."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from nomad_lab.gate import crossval
from nomad_lab.gate.logistic_gate import fit_logistic, logistic_scores


def _labels(n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[list[str]]]:
    refusal = rng.random(n) < 0.35
    tags = [[f"kind-{i % 6}"] if r else ["single-hop"] for i, r in enumerate(refusal)]
    return refusal, tags


def test_operating_points_are_chosen_on_training_folds_only() -> None:
    """200 random gates (each keeps a random 93% of questions): picking the least-leaky one that meets the
    recall target on the very questions it is scored on looks far better than chance; held out, it cannot.
    The figure would fail this test if the point were chosen on the test fold."""
    rng = np.random.default_rng(0)
    n, points = 400, 200
    refusal, tags = _labels(n, rng)
    kept = rng.random((points, n)) < 0.93
    recall = np.where(refusal[None], np.nan, kept.astype(float))
    groups = crossval.question_groups(tags, refusal)
    splits = crossval.repeated_splits((~refusal).astype(int), groups, 5, 3, 7)
    figures = crossval.grid_figures(recall, kept, refusal, splits)
    in_sample, _ = crossval.choose_points(recall, kept, refusal, 0.90, 0.05)
    in_sample_leak = kept[in_sample, refusal].mean()
    assert figures.leak_at_recall[0] > in_sample_leak + 0.02
    assert abs(figures.leak_at_recall[0] - 0.93) < 0.04
    assert figures.leak_at_recall[1] <= figures.leak_at_recall[0] <= figures.leak_at_recall[2]


def test_a_learned_gate_never_scores_a_question_it_was_fitted_on() -> None:
    """Noise features, many of them: fitted in sample the AUC is high; out of fold it is near chance."""
    rng = np.random.default_rng(1)
    n = 240
    refusal, tags = _labels(n, rng)
    x = rng.normal(size=(n, 80))
    y = (~refusal).astype(int)
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def fit_score(train: np.ndarray, score: np.ndarray, c: float) -> np.ndarray:
        assert not np.intersect1d(train, score).size
        seen.append((train, score))
        return logistic_scores(*fit_logistic(x[train], y[train], c), x[score])

    groups = crossval.question_groups(tags, refusal)
    splits = crossval.repeated_splits(y, groups, 5, 2, 3)
    base_recall = np.where(refusal, np.nan, 1.0)
    figures, oof, chosen = crossval.learned_figures(
        fit_score, y, groups, base_recall, ~refusal | refusal, splits, choices=(0.1, 1.0)
    )
    assert len(chosen) == 10 and set(chosen) <= {0.1, 1.0}
    in_sample = crossval.roc_auc(logistic_scores(*fit_logistic(x, y), x), y.astype(bool))
    assert in_sample > 0.8
    assert figures.auc is not None and figures.auc[0] < 0.65
    assert not np.isnan(oof).any() and len(seen) > 10


def test_refusal_families_and_near_duplicates_never_straddle_folds() -> None:
    rng = np.random.default_rng(2)
    n = 120
    refusal, tags = _labels(n, rng)
    vectors = rng.normal(size=(n, 16))
    vectors[1] = vectors[0] * 1.01  # a near-duplicate pair of questions
    groups = crossval.question_groups(tags, refusal, vectors)
    assert groups[0] == groups[1]
    for split in crossval.repeated_splits((~refusal).astype(int), groups, 5, 2, 0):
        for train, test in split:
            assert not set(groups[train]) & set(groups[test])
            test_families = {tuple(tags[i]) for i in test if refusal[i]}
            train_families = {tuple(tags[i]) for i in train if refusal[i]}
            assert not test_families & train_families


def test_leak_point_needs_the_clopper_pearson_bound() -> None:
    refusal = np.array([True] * 100 + [False] * 100)
    # point 0 leaks 3/100 (upper bound above 5%), point 1 leaks 0/100 but keeps only 80% recall
    nonempty = np.ones((2, 200), dtype=bool)
    nonempty[0, 3:100] = False
    nonempty[1, :100] = False
    recall = np.vstack(
        [np.r_[np.full(100, np.nan), np.ones(100)], np.r_[np.full(100, np.nan), np.ones(80), np.zeros(20)]]
    )
    by_recall, by_leak = crossval.choose_points(recall, nonempty, refusal, 0.9, 0.05)
    assert (by_recall, by_leak) == (0, 1)


def _spreading_gate(n: int, seed: int):
    """A planted learned gate whose scores spread wider the more questions it is fitted on (as a
    logistic model's do): the signal times the training size cubed."""
    rng = np.random.default_rng(seed)
    refusal = np.arange(n) % 3 == 0
    signal = np.where(refusal, -1.0, 1.0) + rng.normal(0, 1.0, n)
    y = (~refusal).astype(int)

    def fit_score(train: np.ndarray, scored: np.ndarray, _: object) -> np.ndarray:
        return signal[scored] * float(train.size) ** 3

    return refusal, y, fit_score


def test_the_held_out_fold_is_scored_on_the_scale_its_threshold_was_chosen_on() -> None:
    """Thresholds come from inner models fitted on two thirds of a training fold; a model refitted on
    all of it would score wider and keep fewer answerable questions than the target. Scored by the
    inner models' mean, the held-out recall lands on the target and the held-out scores are that mean."""
    n = 600
    refusal, y, fit_score = _spreading_gate(n, 4)
    groups = np.arange(n)
    splits = crossval.repeated_splits(y, groups, 5, 3, 11)
    base_recall = np.where(refusal, np.nan, 1.0)
    figures, oof, _ = crossval.learned_figures(fit_score, y, groups, base_recall, np.ones(n, bool), splits)
    assert figures.recall_at_recall[0] >= 0.88
    train, test = splits[0][0]
    inner = crossval.repeated_splits(
        y[train], groups[train], crossval.INNER_FOLDS, 1, crossval.BOOTSTRAP_SEED + 1000
    )[0]
    expected = np.mean([fit_score(train[itr], test, None) for itr, _ in inner], axis=0)
    assert np.allclose(oof[0, test], expected)


def test_the_kept_decisions_reproduce_the_out_of_fold_leak_and_recall() -> None:
    n = 300
    refusal, y, fit_score = _spreading_gate(n, 5)
    rng = np.random.default_rng(6)
    base_recall = np.where(refusal, np.nan, (rng.random(n) < 0.95).astype(float))
    base_nonempty = rng.random(n) < 0.9
    splits = crossval.repeated_splits(y, np.arange(n), 5, 2, 3)
    figures, _, _ = crossval.learned_figures(fit_score, y, np.arange(n), base_recall, base_nonempty, splits)
    kept = figures.extra["kept"]
    assert kept.shape == (2, n)
    leak = (kept & base_nonempty)[:, refusal].mean()
    recall = np.where(kept, base_recall, 0.0)[:, ~refusal].mean()
    assert np.isclose(leak, figures.leak_at_recall[0]) and np.isclose(recall, figures.recall_at_recall[0])


def test_unlabelled_rows_are_scored_in_each_outer_fold_as_its_held_out_fold_is() -> None:
    """``also`` rows (pseudo-questions) get, per outer fold, the mean of the inner models that score
    the held-out fold, so a threshold set on them is on the held-out fold's scale."""
    n, extra = 120, 7
    rng = np.random.default_rng(8)
    refusal = np.arange(n) % 3 == 0
    signal = rng.normal(size=n + extra) + np.r_[np.where(refusal, -1.0, 1.0), np.zeros(extra)]
    y = (~refusal).astype(int)

    def fit_score(train: np.ndarray, scored: np.ndarray, _: object) -> np.ndarray:
        assert train.max() < n  # unlabelled rows are never fitted on
        return signal[scored] * float(train.size) + float(np.mean(signal[train]))

    splits = crossval.repeated_splits(y, np.arange(n), 4, 2, 5)
    also = np.arange(n, n + extra)
    figures, _, _ = crossval.learned_figures(
        fit_score, y, np.arange(n), np.where(refusal, np.nan, 1.0), np.ones(n, bool), splits, also=also
    )
    assert figures.extra["also"].shape == (8, extra)
    train, _ = splits[1][2]
    inner = crossval.repeated_splits(
        y[train], np.arange(n)[train], crossval.INNER_FOLDS, 1, crossval.BOOTSTRAP_SEED + 2000
    )[0]
    expected = np.mean([fit_score(train[itr], also, None) for itr, _ in inner], axis=0)
    np.testing.assert_allclose(figures.extra["also"][4 + 2], expected)


def test_remembered_splits_equal_a_fresh_search_and_cannot_be_changed_by_a_caller() -> None:
    """The splits come back the same for equal labels and groups held in new arrays, equal to what
    StratifiedGroupKFold gives afresh; a caller that writes into an index array is refused, so the
    next caller's folds cannot drift; other groups or another seed give other splits."""
    from sklearn.model_selection import StratifiedGroupKFold

    rng = np.random.default_rng(4)
    refusal, tags = _labels(120, rng)
    y = (~refusal).astype(int)
    groups = crossval.question_groups(tags, refusal)
    first = crossval.repeated_splits(y, groups, 5, 2, 9)
    again = crossval.repeated_splits(y.copy(), groups.copy(), 5, 2, 9)
    for r, split in enumerate(again):
        fresh = StratifiedGroupKFold(n_splits=5, shuffle=True, random_state=9 + r).split(y, y, groups)
        for (train, test), (fresh_train, fresh_test) in zip(split, fresh, strict=True):
            assert np.array_equal(train, fresh_train) and np.array_equal(test, fresh_test)
    try:
        first[0][0][0][0] = -1
    except ValueError:
        pass
    else:
        raise AssertionError("a remembered split's index array accepted a write")
    first.append([])  # a caller's own list: the next caller still gets two repeats
    assert len(crossval.repeated_splits(y, groups, 5, 2, 9)) == 2
    for other in (crossval.repeated_splits(y, rng.permutation(groups), 5, 2, 9),
                  crossval.repeated_splits(y, groups, 5, 2, 10)):  # fmt: skip
        assert any(not np.array_equal(a[1], b[1]) for a, b in zip(other[0], first[0], strict=True))


def test_a_fitted_gate_is_saved_at_the_least_leaking_threshold_of_its_pooled_scores() -> None:
    # four answerable questions (recall 1 each, all retrieve something) and two refusals
    refusal = np.array([False, False, False, False, True, True])
    recall = np.where(refusal, np.nan, 1.0)
    nonempty = np.ones(6, dtype=bool)
    oof = np.array([[0.9, 0.8, 0.7, 0.6, 0.8, 0.95], [0.7, 0.8, 0.9, 0.6, 0.6, 0.85]])
    # pooled: 0.8 0.8 0.8 0.6 | 0.7 0.9. Recall 0.90 needs all four answerable (threshold 0.6, both
    # refusals pass); 0.75 is met at 0.8 and 0.7 alike, and 0.8 lets one refusal fewer through
    assert crossval.pooled_threshold(oof, recall, nonempty, refusal) == 0.6
    assert crossval.pooled_threshold(oof, recall, nonempty, refusal, target=0.75) == 0.8
    assert crossval.pooled_threshold(oof[:, :4], recall[:4], nonempty[:4], refusal[:4], 1.01) == float("-inf")


def test_a_runs_folds_are_its_answerable_labels_grouped_by_family_and_near_duplicate() -> None:
    pools = SimpleNamespace(
        tags=[["a"], ["a"], ["b"], ["off"], ["off"], ["near"], ["a"], ["b"]],
        expect_refusal=np.array([False, False, False, True, True, True, False, False]),
    )
    vectors = np.eye(8)
    vectors[1] = vectors[0]  # questions 0 and 1 are near-duplicates
    y, groups, splits = crossval.answerable_folds(pools, vectors, 2, 2, 7)
    assert y.tolist() == [1, 1, 1, 0, 0, 0, 1, 1]
    assert groups[0] == groups[1] and groups[3] == groups[4] and len(set(groups.tolist())) == 6
    again = crossval.repeated_splits(y, groups, 2, 2, 7)
    assert [[(a.tolist(), b.tolist()) for a, b in split] for split in splits] == [
        [(a.tolist(), b.tolist()) for a, b in split] for split in again
    ]
    for split in splits:
        for train, test in split:
            assert not set(groups[train]) & set(groups[test])
