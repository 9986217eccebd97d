"""Default locations of the workspace: datasets, results, baselines and the DuckDB store.

Kept in a module of its own, importing nothing heavy, so ``nomad-lab --help`` can show the defaults
without importing numpy or DuckDB. ``NOMAD_LAB_STORE`` overrides the store path (CI and tests use it).

Notebooks run with the kernel's directory set to where they live (``notebooks/``), so a relative default
such as ``runs/nomad-lab.duckdb`` would point into ``notebooks/``. ``in_workspace`` reads a notebook
parameter the way the repository means it: relative to the workspace root, whatever the kernel's cwd.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import overload

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DATASETS_DIR = PROJECT_ROOT / "datasets"
DEFAULT_CORPUS_DIR = DATASETS_DIR / "corpus"
DEFAULT_GOLDENS_DIR = DATASETS_DIR / "goldens"
# the generic out-of-scope question bank (suite name ``bank``; see datasets/out_of_scope/README.md)
DEFAULT_BANK_PATH = DATASETS_DIR / "out_of_scope" / "bank.jsonl"
RESULTS_DIR = PROJECT_ROOT / "results"
DEFAULT_REPORTS_DIR = RESULTS_DIR / "reports"
DEFAULT_BASELINES_DIR = RESULTS_DIR / "baselines"
DEFAULT_STORE_PATH = Path(os.environ.get("NOMAD_LAB_STORE", PROJECT_ROOT / "runs" / "nomad-lab.duckdb"))


@overload
def in_workspace(path: None) -> None: ...
@overload
def in_workspace(path: str | os.PathLike[str]) -> Path: ...
def in_workspace(path: str | os.PathLike[str] | None) -> Path | None:
    """A path parameter as the workspace means it: ``~`` expanded, a relative path under ``PROJECT_ROOT``.

    ``None`` stays ``None`` (callers read it as "the workspace default"); an absolute path is unchanged.
    """
    if path is None:
        return None
    resolved = Path(path).expanduser()
    return resolved if resolved.is_absolute() else PROJECT_ROOT / resolved


def corpus_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The corpus a notebook means: ``path`` in the workspace, or ``NOMAD_LAB_CORPUS``, or the default
    corpus (read at call time, as :func:`store_path` is)."""
    return in_workspace(path or os.environ.get("NOMAD_LAB_CORPUS") or DEFAULT_CORPUS_DIR)


def store_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The store a notebook means: ``path`` in the workspace, or ``NOMAD_LAB_STORE``, or the default.

    ``NOMAD_LAB_STORE`` is read at call time (not import time), so a kernel started with it set, such as
    the browser test's JupyterLab, sees the store it names.
    """
    if path is not None:
        return in_workspace(path)
    return in_workspace(os.environ.get("NOMAD_LAB_STORE") or PROJECT_ROOT / "runs" / "nomad-lab.duckdb")
