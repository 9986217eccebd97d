"""A temporary package dropped beside a registry's own, for the tests that show a new kind is one module.

The chat-kind and embedder-kind registries look for modules in every package named in their
``PACKAGES``; a test writes a package of its own into its tmp folder, adds it there, and afterwards forgets
its modules so the next test starts from the registry's own kinds.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType

import pytest


def dropped_package(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    registry: ModuleType,
    name: str,
    modules: Mapping[str, str],
) -> Iterator[None]:
    """Package ``name`` holding ``modules`` (file name: source), registered while the generator is paused.

    For a fixture body: ``yield from dropped_package(...)``.
    """
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for file_name, source in modules.items():
        (package / file_name).write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "PACKAGES", (*registry.PACKAGES, name))
    yield
    for module in [m for m in sys.modules if m.startswith(name)]:
        del sys.modules[module]
