"""A learned gate: logistic regression over gate features, saved as a small readable JSON file.

Why a file of plain numbers: applying the gate is a standardization, a dot product and a sigmoid, so
a fitted gate applies with numpy alone (no scikit-learn at apply time) and a reader can see which
features it leans on. The file also carries what it is only valid for: the embedder identity of the
pools and query vectors it was fitted on (applying it to another embedder's is refused, since scores
and vectors live on another scale) and the training run, with its out-of-fold figures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate.gate_file import read_gate_file, write_gate_file

FORMAT = "nomad-lab learned gate v1"
IDENTITY_KEYS = ("model", "version", "method", "dimension")
"""The parts of an embedder identity that decide whether scores and vectors are comparable."""
REGULARIZATION_C = (0.01, 0.1, 1.0)
"""Inverse L2 strengths on standardized features a fit chooses from, inside its training folds only
(a fixed grid around scikit-learn's default of 1, set before any figure was seen)."""


LogisticFit = tuple[np.ndarray, np.ndarray, np.ndarray, float]
"""What :func:`fit_logistic` returns: (mean, scale, coef, intercept) on the standardized scale."""


def same_embedder(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Whether two embedder identities are comparable; none recorded ({} or None: an imported pool file
    from a stack without one of this package's embedders) matches only none."""
    if not a or not b:
        return not a and not b
    return all(a.get(k) == b.get(k) for k in IDENTITY_KEYS)


def describe(identity: Mapping[str, Any] | None) -> str:
    return "unknown" if identity is None else f"{identity.get('model')} ({identity.get('version')})"


@dataclass(frozen=True)
class LearnedGate:
    """A fitted gate. ``score`` is P(on topic); a pool is kept when its score is ≥ ``threshold``."""

    kinds: list[str]
    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    threshold: float
    embedder: dict[str, Any] | None
    training: dict[str, Any] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_fit(
        cls,
        kinds: Sequence[str],
        features: Sequence[str],
        fit: LogisticFit,
        threshold: float,
        embedder: Mapping[str, Any] | None,
        training: dict[str, Any],
        figures: dict[str, Any],
    ) -> LearnedGate:
        """The gate of a :func:`fit_logistic` result, its arrays as the plain lists the file holds."""
        mean, scale, coef, intercept = fit
        return cls(
            kinds=list(kinds),
            features=list(features),
            mean=mean.tolist(),
            scale=scale.tolist(),
            coef=coef.tolist(),
            intercept=intercept,
            threshold=threshold,
            embedder=None if embedder is None else dict(embedder),
            training=training,
            figures=figures,
        )

    def check_embedder(self, identity: Mapping[str, Any] | None, where: str) -> None:
        """Refuse pools or vectors from another embedder than the one the gate was fitted on."""
        if not same_embedder(self.embedder, identity):
            raise NomadLabError(
                f"{where}: the gate was fitted on {describe(self.embedder)} pools, these come from "
                f"{describe(identity)}; fit a gate on this embedder's run instead"
            )

    def score(self, x: np.ndarray) -> np.ndarray:
        """P(on topic) per row of ``x`` (columns in ``features`` order); numpy only."""
        x = np.asarray(x, dtype=float)
        if x.ndim != 2 or x.shape[1] != len(self.features):
            raise NomadLabError(f"learned gate: expected {len(self.features)} feature columns, got {x.shape}")
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        logit = z @ np.asarray(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(logit, -500, 500)))

    def score_table(self, table: Any, where: str) -> np.ndarray:
        """P(on topic) per question of a feature table (a ``gate.features.FeatureTable``): the one place
        a learned gate scores a run, for the ``learned:`` family, ``gate apply`` and the leaderboard's
        transfer row alike. A table from another embedder, or one lacking a feature, is refused."""
        self.check_embedder(table.embedder, where)
        x, names = table.matrix(self.kinds)
        return self.score(x[:, feature_columns(names, self.features, where)])

    def save(self, path: str | Path) -> Path:
        return write_gate_file(path, FORMAT, asdict(self))

    @classmethod
    def load(cls, path: str | Path) -> LearnedGate:
        """Read a gate file; a missing, foreign or incomplete file is one error line naming it."""
        where = str(path)
        gate = read_gate_file(path, FORMAT, cls, "gate file", "a learned gate file")
        sizes = {len(gate.features), len(gate.mean), len(gate.scale), len(gate.coef)}
        if len(sizes) != 1:
            raise NomadLabError(f"{where}: features, mean, scale and coef must have the same length")
        return gate


def fit_logistic(x: np.ndarray, y: np.ndarray, c: float = 1.0) -> LogisticFit:
    """Standardize, then fit an L2 logistic regression (inverse strength ``c``) with balanced class weights.

    Returns (mean, scale, coef, intercept) on the standardized scale; a constant column gets scale 1.
    A training set holding one class (a tiny fold) gives a constant gate at that class.
    """
    from sklearn.linear_model import LogisticRegression  # heavy

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    if len(np.unique(y)) < 2:
        return mean, scale, np.zeros(x.shape[1]), 10.0 if (y.size and y[0] == 1) else -10.0
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000)
    with _thread_pools().limit(limits=1):  # small problems: BLAS threads only contend on 2 shared cores
        model.fit((x - mean) / scale, y)
    return mean, scale, model.coef_[0], float(model.intercept_[0])


@cache
def _thread_pools() -> Any:
    """The process's BLAS and OpenMP pools, found once: ``threadpool_limits`` looks for them again on
    every call (2 ms with torch and onnxruntime loaded), and a leaderboard fits thousands of models."""
    from threadpoolctl import ThreadpoolController  # heavy (ships with scikit-learn)

    return ThreadpoolController()


def mean_of_fits(fits: Sequence[LogisticFit]) -> LogisticFit:
    """One logistic model whose logit is the mean of ``fits``' logits, standardized by their mean
    means and scales: an average of linear models is linear, so the ensemble saves as one.

    Why: a threshold holds only on the scale of the scores it was chosen on. The saved gate is the mean
    of the models whose held-out scores set its threshold; one model refitted on every question would
    score wider and keep fewer answerable questions than the target.
    """
    mean = np.mean([m for m, _, _, _ in fits], axis=0)
    scale = np.mean([s for _, s, _, _ in fits], axis=0)
    weights = np.mean([coef / s for _, s, coef, _ in fits], axis=0)  # per raw feature unit
    offset = float(np.mean([b - (coef / s) @ m for m, s, coef, b in fits]))
    return mean, scale, weights * scale, offset + float(weights @ mean)


def fold_ensemble(
    fit: Callable[[np.ndarray], LogisticFit], x: np.ndarray, split: Sequence[tuple[np.ndarray, np.ndarray]]
) -> tuple[LogisticFit, np.ndarray]:
    """A gate to save and the scores its threshold is set on: the mean of one split's fold models
    (``fit(train_index)`` each) and every question's score by the fold model that did not see it."""
    fits = [fit(train) for train, _ in split]
    held_out = np.full(len(x), np.nan)
    for fitted, (_, test) in zip(fits, split, strict=True):
        held_out[test] = logistic_scores(*fitted, x[test])
    return mean_of_fits(fits), held_out


def logistic_scores(
    mean: np.ndarray, scale: np.ndarray, coef: np.ndarray, intercept: float, x: np.ndarray
) -> np.ndarray:
    logit = ((x - mean) / scale) @ coef + intercept
    return 1.0 / (1.0 + np.exp(-np.clip(logit, -500, 500)))


def _is_query_dim(name: str) -> bool:
    """A dimension of the query embedding (``query_0`` ...), not a feature merely named ``query_*``
    (coverage's ``query_terms``)."""
    return name.startswith("query_") and name[len("query_") :].isdigit()


def coefficient_rows(gate: LearnedGate, top: int = 15) -> list[dict[str, Any]]:
    """The largest standardized coefficients (the query embedding summed as one row per sign)."""
    rows: list[dict[str, Any]] = []
    query = [(n, c) for n, c in zip(gate.features, gate.coef, strict=True) if _is_query_dim(n)]
    rows += [
        {"feature": n, "coef": float(c)}
        for n, c in zip(gate.features, gate.coef, strict=True)
        if not _is_query_dim(n)
    ]
    if query:
        values = np.array([c for _, c in query])
        rows.append(
            {
                "feature": f"query embedding ({len(query)} dims, L2 norm of coefs)",
                "coef": float(np.linalg.norm(values)),
            }
        )
    rows.sort(key=lambda r: -abs(r["coef"]))
    return rows[:top]


def feature_columns(names: Sequence[str], wanted: Sequence[str], where: str) -> list[int]:
    """Indices of ``wanted`` in ``names``; a feature the table lacks is one error line."""
    index = {n: i for i, n in enumerate(names)}
    missing = [w for w in wanted if w not in index]
    if missing:
        raise NomadLabError(f"{where}: the run lacks feature(s) {', '.join(missing[:3])}")
    return [index[w] for w in wanted]
