"""Thresholds without labels: pseudo-questions drafted from the corpus set a gate's recall point.

Why: thresholds do not carry across corpora (the floor's, a cross-encoder's and a learned gate's recall
point all move), so a user with a new library and no goldens has no way to set one. The corpus itself
says what in-domain questions look like: :mod:`nomad_lab.data.drafts` writes template questions from
each document's headings and sentences with that document as gold (never tuned to any golden). Retrieved
like any suite, they give a recall curve with no person involved; the threshold is the most selective
point whose pseudo-question recall@5 still meets the target. With the out-of-scope bank as negatives
(minus the categories the corpus answers), a logistic gate can be fitted label-free as well
(:func:`fit_label_free`). The drafts are loaded as drafts (``drafts=True``), never as labelled goldens.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.drafts import DraftOptions, draft_goldens, read_corpus, write_drafts
from nomad_lab.data.golden_suites import DRAFTS_SUITE
from nomad_lab.eval.gating.fit import bank_run, with_features
from nomad_lab.eval.gating.run_data import RunData, load_run
from nomad_lab.eval.gating.runs import retrieve_run
from nomad_lab.eval.gating.service import gather
from nomad_lab.gate import crossval, masks
from nomad_lab.gate.apply import spec_mask
from nomad_lab.gate.logistic_gate import (
    REGULARIZATION_C,
    LearnedGate,
    fit_logistic,
    fold_ensemble,
    logistic_scores,
)

__all__ = [
    "LabelFree",
    "fit_label_free",
    "most_selective_point",
    "pseudo_run",
    "score_threshold",
    "spec_point",
]

SEED = 1341


def pseudo_run(
    store_path: str | Path,
    corpus_dir: str | Path,
    *,
    embedder: str | None = None,
    include_distractors: bool = True,
    seed: int = SEED,
    progress: bool = False,
) -> RunData:
    """The corpus's templated drafts (answerable, each with its document as gold), retrieved at floor 0."""
    corpus = read_corpus(corpus_dir)
    options = DraftOptions(seed=seed, refusals_per_doc=0, bank_per_category=0)
    result = draft_goldens(corpus, (), options)
    if not result.drafts:
        raise NomadLabError(f"{corpus_dir}: no pseudo-questions could be drafted from its documents")
    with tempfile.TemporaryDirectory(prefix="nomad-pseudo-") as tmp:
        write_drafts(tmp, result, corpus)
        run_id = retrieve_run(
            store_path,
            corpus=corpus_dir,
            goldens=tmp,
            suite=DRAFTS_SUITE,
            include_distractors=include_distractors,
            progress=progress,
            embedder=embedder,
            drafts=True,
        )
    return load_run(store_path, run_id)


def most_selective_point(recall: np.ndarray, target: float = crossval.RECALL_TARGET) -> tuple[int, bool]:
    """(point, reached): the point (row of ``recall``, points × pseudo-questions) with the lowest mean
    recall that still meets ``target``; when none does, the point with the most recall (``reached``
    False: the gate cannot keep the target, so it should keep as much as it can)."""
    with np.errstate(invalid="ignore"):
        mean = np.nan_to_num(np.nanmean(recall, axis=1), nan=0.0)
    meets = np.flatnonzero(mean >= target - 1e-12)
    if meets.size:
        return int(meets[np.argmin(mean[meets])]), True
    return int(np.argmax(mean)), False


def spec_point(
    store_path: str | Path, pseudo: RunData, spec: str, target: float = crossval.RECALL_TARGET
) -> tuple[np.ndarray, int, bool]:
    """(points, index, reached) of a spec's label-free operating point on the pseudo run."""
    _, inputs = gather(store_path, pseudo, spec)
    points, keep = spec_mask(pseudo.pools, spec, inputs)
    recall, _ = masks.evaluate(pseudo.pools, keep)
    index, reached = most_selective_point(recall, target)
    return points, index, reached


def score_threshold(
    scores: np.ndarray, pseudo: RunData, target: float = crossval.RECALL_TARGET
) -> tuple[float, bool]:
    """(threshold, reached) for an all-or-nothing score from its values on the pseudo-questions."""
    thresholds, recall, _ = crossval.threshold_grid(scores, pseudo.base_recall, pseudo.base_nonempty)
    index, reached = most_selective_point(recall, target)
    return float(thresholds[index]), reached


@dataclass(frozen=True)
class LabelFree:
    gate: LearnedGate
    pseudo: RunData
    bank: RunData
    reached: bool


def fit_label_free(
    store_path: str | Path,
    pseudo: RunData,
    kinds: Sequence[str],
    bank_path: str | Path,
    bank_skip: Sequence[str] = (),
    *,
    folds: int = crossval.FOLDS,
    repeats: int = 2,
    seed: int = SEED,
) -> LabelFree:
    """A logistic gate fitted with no labels: pseudo-questions on topic, bank questions off topic.

    The regularization strength is chosen inside folds as for labelled fits; the threshold is the
    most selective point meeting the recall target on the pseudo-questions' held-out scores of the
    fold models whose mean is the saved gate (:func:`~nomad_lab.gate.logistic_gate.fold_ensemble`).
    """
    pseudo = with_features(store_path, pseudo, kinds)
    bank = with_features(store_path, bank_run(store_path, pseudo, bank_path, bank_skip), kinds)
    x = np.vstack([pseudo.features.matrix(list(kinds))[0], bank.features.matrix(list(kinds))[0]])
    names = pseudo.features.matrix(list(kinds))[1]
    y = np.concatenate([np.ones(pseudo.pools.size, dtype=int), np.zeros(bank.pools.size, dtype=int)])
    recall = np.concatenate([pseudo.base_recall, np.full(bank.pools.size, np.nan)])
    nonempty = np.concatenate([pseudo.base_nonempty, bank.base_nonempty])
    groups = np.arange(y.size)
    splits = crossval.repeated_splits(y, groups, folds, repeats, seed)

    def fit_score(train: np.ndarray, score: np.ndarray, c: float) -> np.ndarray:
        return logistic_scores(*fit_logistic(x[train], y[train], c), x[score])

    figures, _, chosen = crossval.learned_figures(
        fit_score, y, groups, recall, nonempty, splits, seed=seed, choices=REGULARIZATION_C
    )
    c = max(set(chosen), key=chosen.count)
    on = slice(0, pseudo.pools.size)
    saved, held_out = fold_ensemble(lambda train: fit_logistic(x[train], y[train], c), x, splits[0])
    threshold, reached = score_threshold(held_out[on], pseudo)
    gate = LearnedGate.from_fit(
        kinds,
        names,
        saved,
        threshold,
        pseudo.embedder,
        training={
            "labels": "none: drafted pseudo-questions on topic, the out-of-scope bank off topic",
            "run": pseudo.run_id,
            "fingerprint": pseudo.pools.fingerprint,
            "questions": int(y.size),
            "pseudoQuestions": pseudo.pools.size,
            "bank": {"run": bank.run_id, "questions": bank.pools.size, "skipped": list(bank_skip)},
            "thresholdFrom": "pseudo-question recall@5 (out of fold)",
            "thresholdReachedTarget": reached,
            "regularizationC": c,
        },
        figures={"pseudoVsBankRocAuc": None if figures.auc is None else list(figures.auc)},
    )
    return LabelFree(gate, pseudo, bank, reached)
