"""What the modules of a package declare under one name: the walk every registry by existence shares.

Why one walk: chat backend kinds, embedder kinds, gate families, gate input kinds and studies are each
registered by a module existing in a package and defining one name (``KIND``, ``FAMILY``, ``STUDY``),
not by a hand-written list. Finding those modules is the same for all; what a registry accepts (the
type, the naming rule, a second claim on one name) and the order it lists them in stay its own, except
where two registries accept alike: :func:`claimed_kinds` is the chat and embedder kinds' one rule.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType
from typing import Any, Protocol, TypeVar

from nomad_lab.core.errors import NomadLabError


class Named(Protocol):
    """A registered value: found by its ``name``."""

    name: str


K = TypeVar("K", bound=Named)


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


def claimed_kinds(
    packages: Iterable[str], kind_type: type[K], keys: Callable[[K], Iterable[str]], what: str = ""
) -> dict[str, K]:
    """Every ``KIND`` of ``kind_type`` in ``packages`` by its ``name``, in module order; a module whose
    kind claims a key (``keys(kind)``: its name, and for a chat kind its prefixes) that an earlier module
    claimed is refused, naming both modules (``what`` words the key: ``embedder kind``).

    Why shared: the chat backend kinds and the embedder kinds are registered by the same rule (a value of
    the registry's type, one module a key), so a third registry of that kind is this call, not a copy.
    """
    found: dict[str, K] = {}
    claimed: dict[str, str] = {}
    for _, module, kind in modules_defining(packages, "KIND"):
        if not isinstance(kind, kind_type):
            continue
        for key in keys(kind):
            if key in claimed:
                raise NomadLabError(f"{module.__name__}: {what}{key!r} is already {claimed[key]}'s")
            claimed[key] = module.__name__
        found[kind.name] = kind
    return found
