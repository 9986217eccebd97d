"""Input kinds a gate may need, one module each: ``KIND`` and ``gather(ctx, key) -> value``.

Why a registry: a family declares what it needs (:class:`nomad_lab.gate.families.Need`); one gatherer
per kind supplies it from a stored run, computing and caching in the store what is missing (verdicts by
judge, scores by model identity), so a new gate that needs a new input is a family module plus, only if
the input is new, a module here. Found by walking this package (its ``__path__``), like the families.

A gathered value is aligned with the run's pools: an array with one entry per question (NaN: none), an
object of such arrays, or a :class:`nomad_lab.gate.features.FeatureBlock` for a kind learned gates read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.module_walk import modules_defining
from nomad_lab.gate.families import GateInputs, Need

Gatherer = Callable[[Any, str], Any]


def input_kinds() -> dict[str, Gatherer]:
    """Every input kind by name: the modules of this package that define ``KIND`` and ``gather``."""
    found: dict[str, Gatherer] = {}
    for _, module, kind in modules_defining([__name__], "KIND"):
        if kind in found:
            raise NomadLabError(f"{module.__name__}: a second gatherer for input kind {kind!r}")
        found[kind] = module.gather
    return found


def gather_needs(ctx: Any, needs: Iterable[Need]) -> GateInputs:
    """Gather each distinct need once; an unknown kind is one line listing the known ones."""
    kinds = input_kinds()
    values: dict[Need, Any] = {}
    for need in dict.fromkeys(needs):
        if need.kind not in kinds:
            raise NomadLabError(
                f"no gatherer for gate input {need.kind!r} (known: {', '.join(sorted(kinds))})"
            )
        values[need] = kinds[need.kind](ctx, need.key)
    return GateInputs(values)
