"""The answerability study's per-tag decisions are the ones ``learned_figures`` scores, and the study is
registered opt-in."""

from types import SimpleNamespace

import numpy as np

from nomad_lab.gate import crossval
from nomad_lab.studies.gating.answerability import STUDY, recording


def test_recorded_keep_decisions_reproduce_the_out_of_fold_leak_and_recall():
    rng = np.random.default_rng(0)
    n = 80
    refusal = np.arange(n) % 4 == 0
    signal = np.where(refusal, 0.0, 1.0) + rng.normal(0, 0.8, n)
    base_recall = np.where(refusal, np.nan, (rng.random(n) < 0.95).astype(float))
    base_nonempty = rng.random(n) < 0.9
    data = SimpleNamespace(
        pools=SimpleNamespace(expect_refusal=refusal), base_recall=base_recall, base_nonempty=base_nonempty
    )
    y = (~refusal).astype(int)
    groups = np.arange(n)
    splits = crossval.repeated_splits(y, groups, 5, 1, 3)

    def fit_score(train, scored, _):
        shift = float(np.mean(signal[train]))  # depends on the training questions, like a fitted model
        return signal[scored] - shift

    recorder, keep = recording(fit_score, n, data, splits)
    figures, _, _ = crossval.learned_figures(recorder, y, groups, base_recall, base_nonempty, splits, seed=3)
    leak = (keep[0] & base_nonempty)[refusal].mean()
    recall = np.where(keep[0], base_recall, 0.0)[~refusal].mean()
    assert np.isclose(leak, figures.leak_at_recall[0])
    assert np.isclose(recall, figures.recall_at_recall[0])


def test_the_study_is_opt_in():
    assert STUDY.name == "answerability" and not STUDY.published
