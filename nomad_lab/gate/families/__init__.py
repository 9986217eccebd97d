"""The gate families by spec word: each family is one small module that registers one :class:`Family`.

Why a registry: a gate spec (``floor@0.62``, ``judge:embedded:gemma3-270m@0.5``, ``learned:gates/x.json``)
is parsed in one place (:mod:`nomad_lab.gate.spec`) from what each family declares here: whether it takes
a target (a backend spec, a gate file), what its number means, its allowed range, what an omitted
number means and which inputs beyond the pools it **needs** (:class:`Need`). Adding a gate is one
module in this package, found by walking it (:func:`families`); the gating service
(:mod:`nomad_lab.eval.gating`) gathers what each part needs from the store and hands it in as
:class:`GateInputs`.

Every family turns its spec into a keep mask shaped ``(points, pools, width)`` like ``gate.masks`` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.module_walk import modules_defining
from nomad_lab.gate import masks

if TYPE_CHECKING:
    from nomad_lab.gate.pools import PoolSet

GateAtom = Any  # a ``gate.spec.GateAtom`` (family, target, value); named here without importing the parser

OMIT_SWEEP = "sweep"  # an omitted number sweeps the family's grid
OMIT_VERDICT = "verdict"  # an omitted number means the judge's all-or-nothing verdict
OMIT_SAVED = "saved"  # an omitted number means the threshold saved in the gate file


@dataclass(frozen=True)
class Need:
    """One input a gate part needs beyond the pools: its ``kind`` (``verdicts``, ``pool``, ``query``,
    ``pair_scores``, ...: an input kind of :mod:`nomad_lab.eval.gating.inputs`) and ``key`` (which one:
    a judge spec, a scorer spec; empty when the kind has one value per run)."""

    kind: str
    key: str = ""

    def __str__(self) -> str:
        return self.kind + (f" {self.key!r}" if self.key else "")


@dataclass(frozen=True)
class GateInputs(Mapping):
    """What a caller gathered beyond the pools: one value per :class:`Need`, aligned with the pools
    (an array with one entry per pool, NaN for none, or a feature block). Reading one that was not
    gathered is one error line naming it."""

    gathered: Mapping[Need, Any] = field(default_factory=dict)

    def __getitem__(self, need: Need) -> Any:
        if need not in self.gathered:
            raise NomadLabError(f"gate input {need} was not gathered (the gating service gathers it)")
        return self.gathered[need]

    def __iter__(self) -> Iterator[Need]:
        return iter(self.gathered)

    def __len__(self) -> int:
        return len(self.gathered)


@dataclass(frozen=True)
class Family:
    """One gate family as the parser and the evaluator see it.

    ``target``: whether a target follows the word after ``:`` (a backend spec, a gate file path).
    ``value``: what the number after ``@`` is, within ``[low, high]`` (``high`` None: unbounded), and
    ``omitted`` what leaving it out means. ``grid`` is the operating points swept when it is omitted.
    ``saved(atom)`` is the point an omitted number stands for when that is not a sweep (a gate file's
    threshold). ``keep(pools, atom, points, inputs)`` gives the keep mask; ``score(pools, atom, inputs)``
    a per-pool score that grows with "on topic" (for ROC AUC), or None when the family has none.
    ``needs(atom)`` lists the inputs beyond the pools the part reads from ``inputs``. An empty ``grid``
    with an omitted number that sweeps means: sweep the quantiles of the family's own score (a logit or
    a probability whose scale the data sets). ``order`` places the family in the accepted-forms list.

    Derived where a declaration leaves them out: ``target`` from ``form`` (``judge:BACKEND_SPEC[@TAU]``
    takes one, ``floor[@F]`` does not), ``high`` None, ``omitted`` the saved threshold when the family
    has ``saved``, else a sweep.
    """

    name: str
    form: str
    value: str
    low: float
    keep: Callable[[PoolSet, GateAtom, np.ndarray, GateInputs], np.ndarray]
    score: Callable[[PoolSet, GateAtom, GateInputs], np.ndarray | None]
    grid: Callable[[], np.ndarray] = field(default=lambda: np.zeros(0))
    default: float | None = None
    saved: Callable[[GateAtom], float] | None = None
    needs: Callable[[GateAtom], tuple[Need, ...]] = field(default=lambda atom: ())
    order: int = 100
    target: bool | None = field(default=None, kw_only=True)  # derived from form
    high: float | None = field(default=None, kw_only=True)
    omitted: str = field(default="", kw_only=True)

    def __post_init__(self) -> None:
        target = ":" in self.form.partition("[")[0]
        if self.target is not None and self.target != target:
            raise ValueError(f"gate family {self.name}: target={self.target} but its form is {self.form!r}")
        object.__setattr__(self, "target", target)
        if not self.omitted:
            object.__setattr__(self, "omitted", OMIT_SWEEP if self.saved is None else OMIT_SAVED)


def all_or_nothing(score: np.ndarray, pools: PoolSet, points: np.ndarray) -> np.ndarray:
    """Keep a whole pool when its score is ≥ the point (NaN score: dropped), shaped like a keep mask."""
    t = np.asarray(points, dtype=float).reshape(-1, 1)
    with np.errstate(invalid="ignore"):
        kept = np.nan_to_num(np.asarray(score, dtype=float), nan=-np.inf)[None] >= t
    return kept[..., None] & pools.valid[None]


def top_value(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Each pool's largest valid value (NaN for an empty pool)."""
    masked = np.where(valid, values, -np.inf)
    top = masked.max(axis=1, initial=-np.inf) if masked.shape[1] else np.full(masked.shape[0], -np.inf)
    return np.where(np.isfinite(top), top, np.nan)


def score_grid(score: np.ndarray, points: int = 101) -> np.ndarray:
    """Operating points for a score of unknown scale: its distinct quantiles (empty when no finite value)."""
    finite = np.asarray(score, dtype=float)
    finite = finite[np.isfinite(finite)]
    return np.unique(np.quantile(finite, np.linspace(0, 1, points))) if finite.size else np.zeros(0)


def families() -> dict[str, Family]:
    """Every family by spec word: each module of this package (its ``__path__``, so a folder added to it
    registers too) that defines ``FAMILY``, in ``order``, then name. A module whose family word differs
    from its name is refused: the word a user types is the module a reader opens. A word that is also a
    study's command word (``sufficiency``) names its module ``WORD_gate.py``, since no two modules of the
    package share a basename (``tests/test_house_rules.py``)."""
    found = []
    for name, module, family in modules_defining([__name__], "FAMILY"):
        if isinstance(family, Family):
            if name not in (family.name, f"{family.name}_gate"):
                raise NomadLabError(
                    f"{module.__name__}: registers family {family.name!r}; name the module "
                    f"{family.name}.py (or {family.name}_gate.py where a study has that name)"
                )
            found.append(family)
    return {f.name: f for f in sorted(found, key=lambda f: (f.order, f.name))}


def saved_threshold(load: Callable[[str], Any]) -> Callable[[GateAtom], float]:
    """A gate-file family's ``saved``: the spec's number, else the threshold saved in the gate file, read
    by ``load`` (the gate class's own loader, which checks the file is that kind of gate)."""

    def threshold(atom: GateAtom) -> float:
        return float(atom.value) if atom.value is not None else load(atom.target).threshold

    return threshold


def floor_family(
    name: str,
    order: int,
    keep: Callable[[PoolSet, np.ndarray], np.ndarray],
    values: Callable[[PoolSet], np.ndarray],
    default: float | None = None,
) -> Family:
    """A family that floors one per-candidate score in [0, 1]: ``keep`` is its mask over the floors,
    ``values`` the score it floors (a pool's best is its score for ROC AUC); an omitted number sweeps
    FLOOR_GRID. The reference's floor and the raw cosine floor are this shape; only the column differs."""
    return Family(
        name=name,
        order=order,
        form=f"{name}[@F]",
        value="floor",
        low=0.0,
        high=1.0,
        keep=lambda pools, atom, points, inputs: keep(pools, points),
        score=lambda pools, atom, inputs: top_value(values(pools), pools.valid),
        grid=lambda: masks.FLOOR_GRID,
        default=default,
    )


def best_score_family(
    name: str,
    order: int,
    form: str,
    value: str,
    kind: str,
    *,
    best: Callable[[Any], Any] = lambda gathered: gathered.best,
    saved: Callable[[GateAtom], float] | None = None,
) -> Family:
    """A family whose gathered input (``Need(kind, target)``) holds each pool's best (question, passage)
    score, read from it by ``best`` (a scorer's ``.best`` by default), kept all or nothing; unbounded. An
    omitted number is the gate file's ``saved`` threshold when the family has one, else it sweeps the
    score's quantiles. Rerankers, cross-encoders and the fine-tuned answer and sufficiency heads are all
    this shape; only their scorer and where an omitted threshold comes from differ."""

    def needs(atom: GateAtom) -> tuple[Need, ...]:
        return (Need(kind, atom.target),)

    def score(pools: PoolSet, atom: GateAtom, inputs: GateInputs) -> np.ndarray:
        return np.asarray(best(inputs[needs(atom)[0]]), dtype=float)

    return Family(
        name=name,
        order=order,
        form=form,
        value=value,
        low=-math.inf,
        keep=lambda pools, atom, points, inputs: all_or_nothing(score(pools, atom, inputs), pools, points),
        score=score,
        saved=saved,
        needs=needs,
    )
