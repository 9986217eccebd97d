"""Input kinds a gate may need, one module each: ``KIND`` and ``gather(ctx, key) -> value``.

Why a registry: a family declares what it needs (:class:`nomad_lab.gate.families.Need`); one gatherer
per kind supplies it from a stored run, computing and caching in the store what is missing (verdicts by
judge, scores by model identity), so a new gate that needs a new input is a family module plus, only if
the input is new, a module here. Found by walking this package (its ``__path__``), like the families.

A kind may also define ``check(key)``: a cheap look at its key (a file exists, a model name is one a
loader knows, a spec parses), with no model loaded and no run read, so the GATE_SPEC parameter type
(:mod:`nomad_lab.eval.gating.gate_spec_type`) refuses a bad spec before any work.

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


def _unknown(kind: str, kinds: dict[str, Any]) -> NomadLabError:
    return NomadLabError(f"no gatherer for gate input {kind!r} (known: {', '.join(sorted(kinds))})")


def check_needs(needs: Iterable[Need]) -> None:
    """Each need's key checked by its kind's ``check`` (kinds without one accept any key)."""
    checks: dict[str, Any] = {}
    for _, module, kind in modules_defining([__name__], "KIND"):
        checks[kind] = getattr(module, "check", None)
    for need in dict.fromkeys(needs):
        if need.kind not in checks:
            raise _unknown(need.kind, checks)
        if checks[need.kind] is not None:
            checks[need.kind](need.key)


def gather_needs(ctx: Any, needs: Iterable[Need]) -> GateInputs:
    """Gather each distinct need once; an unknown kind is one line listing the known ones."""
    kinds = input_kinds()
    values: dict[Need, Any] = {}
    for need in dict.fromkeys(needs):
        if need.kind not in kinds:
            raise _unknown(need.kind, kinds)
        values[need] = kinds[need.kind](ctx, need.key)
    return GateInputs(values)
