"""Fit a learned gate on a stored run (out of fold), save it, and apply a saved gate to another run.

The functions behind ``nomad-lab gate fit`` / ``gate apply`` and the learned rows of ``study gates``.
The feature kinds are gathered through the gating service's input kinds (any kind that gathers a
:class:`~nomad_lab.gate.features.FeatureBlock`), and when several candidate feature sets are given the
set is chosen inside each training fold, with the regularization strength, never on a scored fold.
Labels: a question is on topic unless its golden expects a refusal. Optional extra negatives come from
a generic out-of-scope bank (golden format, every line a refusal), retrieved against the run's own
corpus with the run's own embedder; they only ever join training folds, never a scored fold.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.workspace import DEFAULT_BANK_PATH
from nomad_lab.data.bank import bank_category, drop_near_duplicates, load_bank
from nomad_lab.data.refusal_kinds import REFUSAL_KINDS
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.inputs import gather_needs
from nomad_lab.eval.gating.run_data import RunData, load_run, subset_run
from nomad_lab.eval.gating.runs import retrieve_run
from nomad_lab.gate import crossval
from nomad_lab.gate.crossval import Figures
from nomad_lab.gate.families import Need
from nomad_lab.gate.features import FeatureBlock
from nomad_lab.gate.logistic_gate import (
    REGULARIZATION_C,
    LearnedGate,
    fit_logistic,
    fold_ensemble,
    logistic_scores,
)

DEFAULT_KINDS = ("pool", "query")
CANDIDATE_KINDS: tuple[tuple[str, ...], ...] = (("pool",), ("pool", "query"))
"""What ``gate fit`` chooses between by default, inside each training fold (pool statistics alone were
better out of fold than with the query embedding on both repository corpora, so neither is imposed)."""


def with_features(
    store_path: str | Path, data: RunData, kinds: Sequence[str], progress: bool = False
) -> RunData:
    """``data`` with every feature kind in ``kinds`` gathered (computed and cached where missing)."""
    todo = [k for k in dict.fromkeys(kinds) if k not in data.features.blocks]
    if not todo:
        return data
    data.refuse_lacking(todo, f"features {', '.join(todo)}")
    gathered = gather_needs(GatherContext(Path(store_path), data, progress), [Need(k) for k in todo])
    blocks: dict[str, FeatureBlock] = {need.kind: value for need, value in gathered.items()}
    return replace(data, features=data.features.with_blocks(blocks))


def default_bank() -> Path | None:
    """The generic out-of-scope bank when it exists in the workspace."""
    return DEFAULT_BANK_PATH if DEFAULT_BANK_PATH.is_file() else None


def bank_run(store_path: str | Path, data: RunData, bank: str | Path, skip: Sequence[str] = ()) -> RunData:
    """Retrieve the bank's questions against the run's corpus with the run's embedder; gather them.

    Bank questions that equal or nearly repeat one of the run's questions are dropped first
    (``data.bank.drop_near_duplicates``), so no question is a negative and a scored positive at once;
    so are the ``skip`` categories, the ones the corpus answers (``coding`` for programming manuals).
    """
    path = Path(bank)
    if not path.is_file():
        raise NomadLabError(f"{path}: no such question bank")
    if not path.name.endswith(".jsonl"):
        raise NomadLabError(f"{path}: a question bank is a golden-format .jsonl file")
    if data.corpus_dir is None:
        raise NomadLabError(
            f"run {data.run_id}: its index records no corpus directory to retrieve the bank in"
        )
    questions = load_bank(path)  # checks every line is a tagged refusal, naming <file>:<line>
    unknown = sorted(set(skip) - {bank_category(g) for g in questions})
    if unknown:
        raise NomadLabError(f"{path}: no bank category {', '.join(unknown)} to skip")
    questions = [g for g in questions if bank_category(g) not in set(skip)]
    if not questions:
        raise NomadLabError(f"{path}: the question bank holds no questions")
    as_goldens = [replace(questions[0], id=f"run:{i}", query=q) for i, q in enumerate(data.queries)]
    kept = {g.id for g in drop_near_duplicates(questions, as_goldens)}
    extra_id = retrieve_run(
        store_path,
        corpus=data.corpus_dir,
        goldens=path.parent,
        suite=path.name[: -len(".jsonl")],
        include_distractors=data.include_distractors,
        embedder=data.embedder.get("spec"),
    )
    extra = load_run(store_path, extra_id)
    return subset_run(extra, np.array([gid in kept for gid in extra.pools.ids], dtype=bool))


@dataclass(frozen=True)
class FitResult:
    gate: LearnedGate
    figures: Figures
    oof: np.ndarray  # repeats × questions, out-of-fold P(on topic)
    seconds: float


def candidate_sets(kinds: Sequence[str] | Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """One feature set (``["pool", "query"]``) or several candidates (``[["pool"], ["pool", "query"]]``)."""
    if not kinds:
        raise NomadLabError("gate fit: no feature kinds given")
    if all(isinstance(k, str) for k in kinds):
        return [tuple(kinds)]  # type: ignore[arg-type]
    return [tuple(k) for k in kinds]


def fit_gate(
    data: RunData,
    kinds: Sequence[str] | Sequence[Sequence[str]] = CANDIDATE_KINDS,
    bank: RunData | None = None,
    *,
    folds: int = crossval.FOLDS,
    repeats: int = crossval.REPEATS,
    seed: int = 1341,
    negatives: Sequence[str] | None = None,
) -> FitResult:
    """Out-of-fold figures of a logistic gate, then the gate to save: the mean of its fold models.

    ``negatives``: the refusal kinds a model is trained to reject (None: every refusal). A topicality
    gate is fitted on ``("off-topic",)``: an unanswerable or near-domain refusal retrieves on-topic
    passages, and teaching a topicality model to reject them teaches it to reject on-topic context.
    Held-out folds are scored on every question either way, so each kind's pass rate is reported.

    ``kinds`` is one feature set or several candidates: each outer training fold chooses the set and the
    regularization strength by its own inner out-of-fold scores, so the figures include that choice;
    the saved gate uses the (set, strength) the training folds chose most often. Every kind must already
    be gathered on ``data`` and ``bank`` (:func:`with_features`). The saved gate is the mean of the
    first repeat's fold models (:func:`fold_ensemble`), its threshold the recall-target point of their
    held-out scores, so gate and threshold share one scale; ``figures`` are the honest ones.
    """
    started = time.perf_counter()
    sets = candidate_sets(kinds)
    matrices = [data.features.matrix(list(k)) for k in sets]
    y, groups, splits = crossval.answerable_folds(data.pools, data.features.query, folds, repeats, seed)
    banks = [None if bank is None else bank.features.matrix(list(k))[0] for k in sets]
    kinds_of = data.pools.refusal_kinds
    trainable = (kinds_of == "") | np.isin(kinds_of, list(negatives or REFUSAL_KINDS))

    def training(s: int, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        index = index[trainable[index]]
        x, xb = matrices[s][0], banks[s]
        if xb is None:
            return x[index], y[index]
        return np.vstack([x[index], xb]), np.concatenate([y[index], np.zeros(len(xb), dtype=int)])

    def fit_score(train: np.ndarray, score: np.ndarray, choice: tuple[int, float]) -> np.ndarray:
        s, c = choice
        return logistic_scores(*fit_logistic(*training(s, train), c), matrices[s][0][score])

    choices = [(s, c) for s in range(len(sets)) for c in REGULARIZATION_C]
    figures, oof, chosen = crossval.learned_figures(
        fit_score,
        y,
        groups,
        data.base_recall,
        data.base_nonempty,
        splits,
        seed=seed,
        choices=choices,
        choose_on=trainable,
    )
    s, c = max(set(chosen), key=chosen.count)  # what the training folds chose most often
    kinds, names = sets[s], matrices[s][1]
    saved, held_out = fold_ensemble(
        lambda train: fit_logistic(*training(s, train), c), matrices[s][0], splits[0]
    )
    thresholds, rec, ne = crossval.threshold_grid(held_out, data.base_recall, data.base_nonempty)
    at_recall, at_leak = crossval.choose_points(
        rec, ne, data.pools.expect_refusal, crossval.RECALL_TARGET, crossval.LEAK_TARGET
    )
    threshold = float(thresholds[at_recall]) if at_recall is not None else 0.0
    gate = LearnedGate.from_fit(
        kinds,
        names,
        saved,
        threshold,
        data.embedder,
        training={
            "run": data.run_id,
            "fingerprint": data.pools.fingerprint,
            "questions": int(y.size),
            "questionIds": list(data.pools.ids),  # a transfer is scored only on questions not in here
            "refusals": int(data.pools.expect_refusal.sum()),
            "bank": None if bank is None else {"run": bank.run_id, "questions": bank.pools.size},
            "negatives": list(negatives or REFUSAL_KINDS),
            "thresholdAtLeak": None if at_leak is None else float(thresholds[at_leak]),
            "regularizationC": c,
            "regularizationChosenPerFold": {str(k): sum(x[1] == k for x in chosen) for k in REGULARIZATION_C},
            "featureSetsChosenPerFold": {
                "+".join(k): sum(x[0] == i for x in chosen) for i, k in enumerate(sets)
            },
        },
        figures=figures_json(figures, data.pools.refusal_kinds),
    )
    return FitResult(gate, figures, oof, time.perf_counter() - started)


def figures_json(f: Figures, kinds: np.ndarray | None = None) -> dict[str, Any]:
    """A gate's out-of-fold figures as its file stores them; with ``kinds`` (each question's refusal kind,
    "" when answerable) also each kind's pass rate apart (``byKind``: off-topic leak first)."""
    by_kind = {} if kinds is None else {"byKind": crossval.kind_figures(f, kinds, REFUSAL_KINDS)}
    return {
        "outOfFold": True,
        "folds": f.folds,
        "repeats": f.repeats,
        "recallTarget": crossval.RECALL_TARGET,
        "leakTarget": crossval.LEAK_TARGET,
        "leakAtRecallTarget": list(f.leak_at_recall),
        "recallAtRecallTarget": list(f.recall_at_recall),
        "recallAtLeakTarget": None if f.recall_at_leak is None else list(f.recall_at_leak),
        "leakAtLeakTarget": None if f.leak_at_leak is None else list(f.leak_at_leak),
        "rocAuc": None if f.auc is None else list(f.auc),
        "recallTargetReachedInTraining": f.reached,
        **by_kind,
    }


def apply_gate(gate: LearnedGate, data: RunData, threshold: float | None = None) -> dict[str, Any]:
    """Scores and decisions of a gate on a run whose features are gathered (:func:`with_features`),
    with its leak and recall@5 there (:func:`applied_figures`); refuses another embedder's run."""
    started = time.perf_counter()
    scores = gate.score_table(data.features, f"gate on run {data.run_id}")
    return applied_figures(gate, data, scores, time.perf_counter() - started, threshold)


def applied_figures(
    gate: LearnedGate, data: RunData, scores: np.ndarray, seconds: float, threshold: float | None = None
) -> dict[str, Any]:
    """A gate's decisions on a run from its ``scores`` (one per question, ``seconds`` to compute), with
    its leak and recall@5 there. Leak and recall are counted on the questions the gate was not fitted on
    (its file lists them); when every question was in its training, on all of them, and ``inSample``
    says so."""
    t = gate.threshold if threshold is None else threshold
    kept = scores >= t
    seen = set(gate.training.get("questionIds", []))
    unseen = np.array([i not in seen for i in data.pools.ids], dtype=bool)
    counted = unseen if unseen.any() else np.ones_like(unseen)
    refusal = data.pools.expect_refusal & counted
    answerable = ~np.isnan(data.base_recall) & counted
    leaked = kept & data.base_nonempty & refusal
    return {
        "run": data.run_id,
        "threshold": t,
        "inSample": not unseen.any(),
        "questions": int(counted.sum()),
        "seenInTraining": int((~unseen).sum()),
        "leak": float(leaked[refusal].mean()) if refusal.any() else None,
        "leaked": int(leaked.sum()),
        "refusals": int(refusal.sum()),
        "recall@5": float(np.where(kept, data.base_recall, 0.0)[answerable].mean())
        if answerable.any()
        else None,
        "msPerQuestion": 1000 * seconds / max(1, data.pools.size),
        "scores": {i: float(s) for i, s in zip(data.pools.ids, scores, strict=True)},
    }
