"""Every study by name: the modules under ``studies/gating`` and ``studies/budgeting`` that end with
``STUDY = Study(...)`` (see :mod:`nomad_lab.studies.shape`).

Found by walking the two halves, not by a hand-written list, so a new study module is registered by
existing; the halves stay independent of each other (this module sits above both).

One name per study: its registry name is its command word (``nomad-lab study per-passage``) and its
module is that name with ``_`` for ``-`` (``studies/gating/per_passage.py``), since a Python module
name cannot hold a ``-``. A module whose ``STUDY`` has another name is refused here.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.module_walk import modules_defining
from nomad_lab.studies.shape import Study, declared

HALVES = ("nomad_lab.studies.gating", "nomad_lab.studies.budgeting")


def studies() -> dict[str, Study]:
    """Every registered study by name, in main-job order (``stage``, then name)."""
    found: list[Study] = []
    for name, module, study in modules_defining(HALVES, "STUDY"):
        if isinstance(study, Study):
            if study.module_name != name:
                raise NomadLabError(
                    f"{module.__name__}: registers study {study.name!r}; name the module "
                    f"{study.module_name}.py (a study's module, name and command word are one word)"
                )
            found.append(study)
    names = [s.name for s in found]
    if len(set(names)) != len(names):
        raise NomadLabError(f"studies: two modules register the same study name: {sorted(names)}")
    return {s.name: s for s in sorted(found, key=lambda s: (s.stage, s.name))}


def get(name: str) -> Study:
    """The study called ``name``; an unknown name is one error line listing the known ones.

    Only the study's own module is imported when it is the one module of that name and registers
    ``name``: running one study (a notebook's kernel, a Dask worker) need not import all the others.
    Anything else goes through the full walk, which names the problem.
    """
    own = _own_module_study(name)
    if own is not None:
        return own
    known = studies()
    if name not in known:
        raise NomadLabError(f"study {name!r}: no such study (known: {', '.join(sorted(known))})")
    return known[name]


def _own_module_study(name: str) -> Study | None:
    """The ``STUDY`` of the one module named after ``name`` across the halves, if it is called ``name``."""
    module = name.replace("-", "_")
    if not module.isidentifier():
        return None
    found = [f"{half}.{module}" for half in HALVES if importlib.util.find_spec(f"{half}.{module}")]
    study = getattr(importlib.import_module(found[0]), "STUDY", None) if len(found) == 1 else None
    return study if isinstance(study, Study) and study.name == name else None


def published() -> list[Study]:
    """The studies ``nomad-lab reproduce`` runs, in order."""
    return [s for s in studies().values() if s.published]


def defaults(name: str) -> dict[str, Any]:
    """The declared default of every parameter of study ``name`` (``out`` included): what a notebook's
    parameters cell holds and what ``nomad-lab study NAME`` runs with when given no option."""
    return {p.name: p.default for p in declared(get(name)) if not p.required}
