"""Every study by name: the modules under ``studies/gating`` and ``studies/budgeting`` that end with
``STUDY = Study(...)`` (see :mod:`nomad_lab.studies.shape`).

Found by walking the two halves, not by a hand-written list, so a new study module is registered by
existing; the halves stay independent of each other (this module sits above both).
"""

from __future__ import annotations

import importlib
import pkgutil

from nomad_lab.core.errors import NomadLabError
from nomad_lab.studies.shape import Study

HALVES = ("nomad_lab.studies.gating", "nomad_lab.studies.budgeting")


def studies() -> dict[str, Study]:
    """Every registered study by name, in main-job order (``stage``, then name)."""
    found: list[Study] = []
    for half in HALVES:
        package = importlib.import_module(half)
        for info in pkgutil.iter_modules(package.__path__):
            study = getattr(importlib.import_module(f"{half}.{info.name}"), "STUDY", None)
            if isinstance(study, Study):
                found.append(study)
    names = [s.name for s in found]
    if len(set(names)) != len(names):
        raise NomadLabError(f"studies: two modules register the same study name: {sorted(names)}")
    return {s.name: s for s in sorted(found, key=lambda s: (s.stage, s.name))}


def get(name: str) -> Study:
    """The study called ``name``; an unknown name is one error line listing the known ones."""
    known = studies()
    if name not in known:
        raise NomadLabError(f"study {name!r}: no such study (known: {', '.join(sorted(known))})")
    return known[name]


def published() -> list[Study]:
    """The studies ``nomad-lab reproduce`` runs, in order."""
    return [s for s in studies().values() if s.published]
