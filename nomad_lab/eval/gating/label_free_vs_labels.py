"""How good a label-free threshold is: measured against the labels of two corpora, each against the other.

Why: :mod:`nomad_lab.eval.gating.label_free_thresholds` sets thresholds with no label read; only
labelled goldens can say whether they land where a labelled threshold would. For each corpus and for
two gates (the score floor, and the logistic gate over pool + coverage features with the bank, the best
learned row that needs no model call), the recall@5 and the pass rate per refusal kind each threshold
achieves on that corpus's labelled goldens:

- ``in fold``: the threshold chosen from labels inside training folds, scored on held-out folds (the
  leaderboard's figure);
- ``label-free``: the threshold set on pseudo-questions drafted from the corpus (no label read); for the
  learned gate with the same per-fold models as ``in fold``, so only the threshold differs;
- ``transferred``: the threshold (and, for the learned gate, the model) chosen on the other corpus with
  all its labels;
- ``transferred model, label-free threshold``: the other corpus's gate, its threshold set here without
  labels (what a user with a new library can do);
- ``label-free model``: a gate fitted on pseudo-questions against the bank, its threshold from them.

Every row's leak is split by refusal kind (:func:`nomad_lab.gate.crossval.kind_figures`), never blended.
``nomad-lab study label-free`` publishes it (``nomad_lab.studies.gating.label_free``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.refusal_kinds import REFUSAL_KINDS
from nomad_lab.eval.gating.fit import bank_run, default_bank, fit_gate, with_features
from nomad_lab.eval.gating.label_free_thresholds import (
    fit_label_free,
    pseudo_run,
    score_threshold,
    spec_point,
)
from nomad_lab.eval.gating.run_data import RunData, load_run
from nomad_lab.eval.gating.runs import retrieve_run
from nomad_lab.eval.gating.service import gather
from nomad_lab.gate import crossval, masks
from nomad_lab.gate.apply import spec_mask
from nomad_lab.gate.crossval import Figures
from nomad_lab.gate.logistic_gate import REGULARIZATION_C, feature_columns, fit_logistic, logistic_scores

__all__ = ["FEATURES", "SEED", "TOLERANCE", "Corpus", "compare"]

FEATURES = ("pool", "coverage")
SEED = 1341
TOLERANCE = 0.03
"""The issue's target: a label-free threshold's recall@5 within this of the in-fold one."""
LEARNED = "learned: pool + coverage + bank"


@dataclass(frozen=True)
class Corpus:
    """A labelled corpus: its name in the output, documents, goldens, and the bank categories it answers
    (left out of the bank's negatives, as the leaderboard's ``--bank-skip``)."""

    name: str
    corpus_dir: Path
    goldens_dir: Path
    bank_skip: tuple[str, ...] = ()


def _triple(t: tuple[float, float, float] | None) -> list[float] | None:
    return None if t is None else [round(float(x), 4) for x in t]


def row_of(
    kinds: np.ndarray,
    row_id: str,
    gate: str,
    threshold: str,
    figures: Figures,
    point: float | None,
    **extra: Any,
) -> dict[str, Any]:
    """One table row; its leak per refusal kind (``kinds``: the run's), never blended."""
    by_kind = crossval.kind_figures(figures, kinds, REFUSAL_KINDS)
    return {
        "id": row_id,
        "gate": gate,
        "threshold": threshold,
        "point": None if point is None else round(float(point), 4),
        "recall": _triple(figures.recall_at_recall),
        "byKind": {k: {"n": v["n"], "pass": _triple(v["passAtRecallTarget"])} for k, v in by_kind.items()},
        **extra,
    }


def labelled_runs(
    store: Path, corpus: Corpus, suite: str, bank: Path, progress: bool
) -> tuple[RunData, RunData]:
    """The corpus's labelled goldens retrieved at floor 0, and the bank over the same index, both with
    the gate's features."""
    run_id = retrieve_run(
        store, corpus=corpus.corpus_dir, goldens=corpus.goldens_dir, suite=suite, progress=progress
    )
    data = with_features(store, load_run(store, run_id), FEATURES)
    negatives = with_features(store, bank_run(store, data, bank, corpus.bank_skip), FEATURES)
    return data, negatives


def _floor_curve(store: Path, data: RunData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    _, inputs = gather(store, data, "floor")
    points, keep = spec_mask(data.pools, "floor", inputs)
    recall, nonempty = masks.evaluate(data.pools, keep)
    return points, recall, nonempty


def _splits(data: RunData) -> tuple[np.ndarray, np.ndarray, list]:
    return crossval.answerable_folds(data.pools, data.features.query, crossval.FOLDS, crossval.REPEATS, SEED)


def floor_rows(store: Path, data: RunData, pseudo: RunData, other: RunData) -> list[dict[str, Any]]:
    """The floor's rows: in fold, label-free, transferred from ``other``."""
    points, recall, nonempty = _floor_curve(store, data)
    refusal = data.pools.expect_refusal
    _, _, splits = _splits(data)
    in_fold = crossval.grid_figures(recall, nonempty, refusal, splits)
    lf_points, lf, reached = spec_point(store, pseudo, "floor")
    other_points, other_recall, other_nonempty = _floor_curve(store, other)
    assert np.array_equal(points, lf_points) and np.array_equal(points, other_points)
    tr, _ = crossval.choose_points(
        other_recall, other_nonempty, other.pools.expect_refusal, crossval.RECALL_TARGET, 1.0
    )
    tr = 0 if tr is None else tr  # the other corpus never reaches the target: its loosest point

    def fixed(i: int) -> Figures:
        return crossval.point_figures(recall[i], nonempty[i], refusal, None)

    _row = partial(row_of, data.pools.refusal_kinds)
    return [
        _row("floor/in-fold", "floor", "in fold", in_fold, None),
        _row("floor/label-free", "floor", "label-free", fixed(lf), points[lf], reachedOnPseudo=reached),
        _row("floor/transferred", "floor", "transferred", fixed(tr), points[tr]),
    ]


def _gate_scores(gate: Any, data: RunData) -> np.ndarray:
    x, names = data.features.matrix(gate.kinds)
    return gate.score(x[:, feature_columns(names, gate.features, data.run_id)])


def learned_rows(
    store: Path,
    data: RunData,
    bank: RunData,
    pseudo: RunData,
    other: tuple[RunData, RunData],
    skip: tuple[str, ...],
    bank_path: Path,
) -> list[dict[str, Any]]:
    """The learned gate's rows: in fold, label-free on the same per-fold models, transferred (model and
    threshold), transferred model with a label-free threshold, and the gate fitted with no labels."""
    pseudo = with_features(store, pseudo, FEATURES)
    y, groups, splits = _splits(data)
    refusal = data.pools.expect_refusal
    x, xb, xp = (d.features.matrix(list(FEATURES))[0] for d in (data, bank, pseudo))
    rows = np.vstack([x, xp])  # the pseudo-questions after the labelled ones, scored like a held-out fold

    def fit_score(train: np.ndarray, score: np.ndarray, c: float) -> np.ndarray:
        model = fit_logistic(np.vstack([x[train], xb]), np.concatenate([y[train], np.zeros(len(xb), int)]), c)
        return logistic_scores(*model, rows[score])

    in_fold, oof, _ = crossval.learned_figures(
        fit_score,
        y,
        groups,
        data.base_recall,
        data.base_nonempty,
        splits,
        seed=SEED,
        choices=REGULARIZATION_C,
        also=np.arange(len(x), len(rows)),
    )
    keep = np.zeros_like(oof, dtype=bool)
    reached = []
    folds = ((r, test) for r, split in enumerate(splits) for _, test in split)
    for (r, test), pseudo_scores in zip(folds, in_fold.extra["also"], strict=True):
        threshold, ok = score_threshold(pseudo_scores, pseudo)
        keep[r, test] = oof[r, test] >= threshold
        reached.append(ok)

    def decided(k: np.ndarray) -> Figures:
        return crossval.decision_figures(k, None, data.base_recall, data.base_nonempty, refusal, None)

    lf_in = crossval.decision_figures(
        keep, None, data.base_recall, data.base_nonempty, refusal, None, reached, None, splits
    )
    other_data, other_bank = other
    transferred = fit_gate(other_data, [FEATURES], other_bank, seed=SEED).gate
    scores = _gate_scores(transferred, data)
    t_lf, t_ok = score_threshold(_gate_scores(transferred, pseudo), pseudo)
    free = fit_label_free(store, pseudo, FEATURES, bank_path, skip, seed=SEED)
    free_scores = _gate_scores(free.gate, data)
    _row = partial(row_of, data.pools.refusal_kinds)
    return [
        _row("learned/in-fold", LEARNED, "in fold", in_fold, None),
        _row("learned/label-free", LEARNED, "label-free (same per-fold models)", lf_in, None),
        _row("learned/transferred", LEARNED, "transferred (model and threshold)",
             decided(scores >= transferred.threshold), transferred.threshold),
        _row("learned/transferred-label-free", LEARNED, "transferred model, label-free threshold",
             decided(scores >= t_lf), t_lf, reachedOnPseudo=t_ok),
        _row("learned/label-free-model", "label-free gate: pseudo-questions vs bank, pool + coverage",
             "label-free (model and threshold)", decided(free_scores >= free.gate.threshold),
             free.gate.threshold, reachedOnPseudo=free.reached),
    ]  # fmt: skip


def _with_deltas(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row's recall minus its gate's in-fold recall (None for a gate with no in-fold row)."""
    base = {r["gate"]: r["recall"][0] for r in rows if r["threshold"] == "in fold"}
    for row in rows:
        gate = row["gate"]
        row["recallMinusInFold"] = round(row["recall"][0] - base[gate], 4) if gate in base else None
    return rows


def compare(
    store: str | Path,
    corpora: tuple[Corpus, Corpus],
    suite: str,
    *,
    bank: str | Path | None = None,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Both corpora's rows, each corpus's transferred thresholds taken from the other; ``bank``: the
    out-of-scope questions used as negatives (None: the shared bank)."""
    store, bank = Path(store), Path(bank or default_bank())
    if corpora[0].name == corpora[1].name:
        raise NomadLabError(f"label-free: the two corpora need two names, both are {corpora[0].name!r}")
    labelled = {c.name: labelled_runs(store, c, suite, bank, progress) for c in corpora}
    out = []
    for corpus, other in (corpora, corpora[::-1]):
        data, negatives = labelled[corpus.name]
        pseudo = pseudo_run(store, corpus.corpus_dir, seed=SEED, progress=progress)
        rows = floor_rows(store, data, pseudo, labelled[other.name][0])
        rows += learned_rows(store, data, negatives, pseudo, labelled[other.name], corpus.bank_skip, bank)
        rows = _with_deltas(rows)
        out.append(
            {
                "name": corpus.name,
                "other": other.name,
                "questions": data.pools.size,
                "refusals": int(data.pools.expect_refusal.sum()),
                "refusalsByKind": {k: int((data.pools.refusal_kinds == k).sum()) for k in REFUSAL_KINDS},
                "baseRecall": round(float(np.nanmean(data.base_recall)), 4),
                "pseudoQuestions": pseudo.pools.size,
                "pseudoBaseRecall": round(float(np.nanmean(pseudo.base_recall)), 4),
                "rows": rows,
                "withinTolerance": {
                    r["id"].split("/")[0]: abs(r["recallMinusInFold"]) <= TOLERANCE
                    for r in rows
                    if r["id"].endswith("/label-free")
                },
            }
        )
    return out
