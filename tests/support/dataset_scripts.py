"""The dataset builders under ``datasets/`` as modules: they are scripts, not package members."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from nomad_lab.core.workspace import DATASETS_DIR


def load_script(relative: str) -> ModuleType:
    """``datasets/<relative>`` imported under its file stem (dataclasses look their module up there)."""
    path: Path = DATASETS_DIR / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
