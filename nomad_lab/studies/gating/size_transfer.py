"""A gate fitted on the smallest library, applied unchanged at a larger one: the question a user faces.

A user fits a gate on their golden questions over the library they have today, then the library grows a
hundredfold and the gate stays deployed. This measures that, out of fold: for each outer training fold of
the small library's questions, a gate is fitted there exactly as ``nomad-lab gate fit`` fits one (feature
set and strength chosen inside the fold, its threshold at the recall target of its own held-out scores),
and the held-out questions are scored twice with that gate and that threshold, unchanged: on their pools
at the small size and on their pools at the large size. Same questions, same gate, only the library
differs, so the change in each refusal kind's pass rate is paired question by question.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.eval.gating import RunData, subset_run
from nomad_lab.eval.gating.fit import apply_gate, fit_gate, with_features
from nomad_lab.gate import crossval
from nomad_lab.gate.crossval import Figures
from nomad_lab.gate.stats import paired_bootstrap
from nomad_lab.studies.gating.gate_rows import SEED, Recipe

__all__ = ["Transfer", "transfer"]


@dataclass
class Transfer:
    """One recipe's gates, fitted per training fold at the small size: their held-out figures at the
    small size (``at_small``) and at the large size (``at_large``), the keep decisions there, cost."""

    name: str
    at_small: Figures
    at_large: Figures
    ms: float
    calls: float


def aligned(small: RunData, large: RunData) -> tuple[RunData, RunData]:
    """Both runs restricted to the questions they share, in the same order (both retrieve the same
    goldens, so normally all of them); refused if they share too few to fold."""
    shared = set(small.pools.ids) & set(large.pools.ids)
    a = subset_run(small, np.array([i in shared for i in small.pools.ids], dtype=bool))
    b = subset_run(large, np.array([i in shared for i in large.pools.ids], dtype=bool))
    if list(a.pools.ids) != list(b.pools.ids) or len(shared) < 20:
        raise NomadLabError(
            f"transfer: runs {small.run_id} and {large.run_id} share {len(shared)} questions in another "
            "order or too few to fold; retrieve the same suites at both sizes"
        )
    return a, b


def _mask(n: int, index: np.ndarray) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[index] = True
    return mask


def transfer(
    store: Path,
    small: RunData,
    larger: Sequence[RunData],
    recipe: Recipe,
    bank: RunData | None,
    name: str,
    folds: int = crossval.FOLDS,
    repeats: int = crossval.REPEATS,
) -> list[Transfer]:
    """``recipe``'s fold gates, fitted once on ``small``'s training folds (with ``bank``'s negatives when
    the recipe uses the bank), each scored on its held-out questions at the small size and at every size
    of ``larger`` with its own threshold: one :class:`Transfer` per larger size."""
    kinds_sets, with_bank, negatives = recipe
    needed = sorted({k for s in kinds_sets for k in s})
    small = with_features(store, small, needed)
    pairs = [aligned(small, with_features(store, large, needed)) for large in larger]
    small = pairs[0][0] if pairs else small
    used_bank = with_features(store, bank, needed) if with_bank and bank is not None else None
    refusal = small.pools.expect_refusal
    splits = crossval.answerable_folds(small.pools, small.features.query, folds, repeats, SEED)[2]
    n = small.pools.size
    runs = [small, *(large for _, large in pairs)]
    keep = [np.zeros((repeats, n), dtype=bool) for _ in runs]
    score = [np.full((repeats, n), np.nan) for _ in runs]
    applied_s, applied_q = 0.0, 0
    for r, split in enumerate(splits):
        for train, test in split:
            fitted = fit_gate(
                subset_run(small, _mask(n, train)),
                [list(s) for s in kinds_sets],
                used_bank,
                folds=folds,
                repeats=1,
                seed=SEED,
                negatives=negatives,
            ).gate
            for i, data in enumerate(runs):
                held_out = subset_run(data, _mask(n, test))
                started = time.perf_counter()
                scores = apply_gate(fitted, held_out)["scores"]
                applied_s += time.perf_counter() - started
                applied_q += test.size
                values = np.array([scores[q] for q in held_out.pools.ids])
                score[i][r, test] = values
                keep[i][r, test] = values >= fitted.threshold
    figures = []
    for i, data in enumerate(runs):
        f = crossval.decision_figures(
            keep[i],
            None,
            data.base_recall,
            data.base_nonempty,
            refusal,
            crossval.auc_interval(score[i], ~refusal),
            splits=splits,
        )
        f.extra["score"], f.extra["kept"] = score[i], keep[i]
        figures.append(f)
    ms = 1000 * applied_s / max(1, applied_q)
    out = []
    for (_, large), at_large in zip(pairs, figures[1:], strict=True):
        costs = [c for k in needed if (c := large.features.blocks[k].cost) is not None]
        cost_ms = ms + sum(c[1] for c in costs)
        out.append(Transfer(name, figures[0], at_large, cost_ms, float(sum(c[0] for c in costs))))
    return out


def leak_change(t: Transfer, kinds: np.ndarray, kind: str) -> dict[str, Any]:
    """The change in ``kind``'s pass rate from the small size to the large one, paired over the same
    refusals (a bootstrap of the repeat-averaged pass per question)."""
    mask = kinds == kind
    small, large = t.at_small.extra["leaked"][mask], t.at_large.extra["leaked"][mask]
    test = paired_bootstrap(small, large)
    return {"difference": test.statistic, "low": test.low, "high": test.high, "p": test.p_value, "n": test.n}
