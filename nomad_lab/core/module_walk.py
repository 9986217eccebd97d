"""What the modules of a package declare under one name: the walk every registry by existence shares.

Why one walk: chat backend kinds, embedder kinds, gate families, gate input kinds and studies are each
registered by a module existing in a package and defining one name (``KIND``, ``FAMILY``, ``STUDY``),
not by a hand-written list. Finding those modules is the same for all; what a registry accepts (the
type, the naming rule, a second claim on one name) and the order it lists them in stay its own.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Iterator
from types import ModuleType
from typing import Any


def modules_defining(packages: Iterable[str], attribute: str) -> Iterator[tuple[str, ModuleType, Any]]:
    """``(name, module, value)`` for each module directly in ``packages`` whose ``attribute`` is not None.

    ``name`` is the module's own name within its package. Package by package, in module-name order
    within each; a package's modules are those on its ``__path__``, so a folder added to it counts too.
    Each module is imported, so one that fails to import fails the walk.
    """
    for package_name in packages:
        package = importlib.import_module(package_name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            module = importlib.import_module(f"{package_name}.{info.name}")
            value = getattr(module, attribute, None)
            if value is not None:
                yield info.name, module, value
