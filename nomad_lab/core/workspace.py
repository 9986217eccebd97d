"""Default locations of the workspace: datasets, results, baselines and the DuckDB store.

Kept in a module of its own, importing nothing heavy, so ``nomad-lab --help`` can show the defaults
without importing numpy or DuckDB. ``NOMAD_LAB_STORE`` overrides the store path (CI and tests use it).
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DATASETS_DIR = PROJECT_ROOT / "datasets"
DEFAULT_CORPUS_DIR = DATASETS_DIR / "corpus"
DEFAULT_GOLDENS_DIR = DATASETS_DIR / "goldens"
RESULTS_DIR = PROJECT_ROOT / "results"
DEFAULT_REPORTS_DIR = RESULTS_DIR / "reports"
DEFAULT_BASELINES_DIR = RESULTS_DIR / "baselines"
DEFAULT_STORE_PATH = Path(os.environ.get("NOMAD_LAB_STORE", PROJECT_ROOT / "runs" / "nomad-lab.duckdb"))
