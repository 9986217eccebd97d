"""The model work a process did, counted where it happens: tokens llama.cpp prefilled, per call.

Why: wall time depends on the machine (a 2-core AVX2 box took 1.7x what an AVX-512 one did for the
same main job), so the main job's manifest also records the work itself. Every embedded llama.cpp
evaluation reports here; when ``NOMAD_LAB_WORK_LOG`` names a file, each call appends one JSON line to
it, so work done in notebook kernels and Dask workers (other processes) is counted too. ``nomad-lab
reproduce`` points it at one file per step and sums it with :func:`read_work_log`.

The same log says which models and embedders the work used (:func:`note_use`), so a result's
provenance names what ran rather than what its parameters happened to mention.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

WORK_LOG_ENV = "NOMAD_LAB_WORK_LOG"


@dataclass(frozen=True)
class Work:
    """Model calls and the prompt tokens they prefilled (evaluated, not reused from the KV cache)."""

    calls: int = 0
    prefilled_tokens: int = 0


_USED: dict[str, dict[str, str]] = {"models": {}, "embedders": {}}


def note_use(kind: str, name: str, identity: str) -> None:
    """``kind`` ("models" or "embedders") ``name`` was used, identified by ``identity`` (a GGUF path,
    an embedder's version); remembered in this process and appended to the log if one is set."""
    _USED[kind][name] = identity
    path = os.environ.get(WORK_LOG_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"use": kind, "name": name, "identity": identity}) + "\n")


def used(log: str | Path | None = None) -> dict[str, dict[str, str]]:
    """Every model and embedder noted in this process since :func:`forget_uses`, and in ``log``."""
    found = {kind: dict(names) for kind, names in _USED.items()}
    if log is not None and Path(log).is_file():
        for line in Path(log).read_text(encoding="utf-8").splitlines():
            entry = json.loads(line) if line.strip() else {}
            if "use" in entry:
                found[entry["use"]][entry["name"]] = entry["identity"]
    return found


def forget_uses() -> None:
    """Start a new command's record of what it used (``nomad-lab reproduce`` runs steps in one process)."""
    for names in _USED.values():
        names.clear()


def note_prefill(model: str, prefilled_tokens: int) -> None:
    """One evaluation of ``model`` that prefilled ``prefilled_tokens``; appended to the log if one is set."""
    path = os.environ.get(WORK_LOG_ENV)
    if not path:
        return
    line = json.dumps({"model": model, "prefilled": int(prefilled_tokens)})
    with open(path, "a", encoding="utf-8") as log:  # one short append per call: safe across processes
        log.write(line + "\n")


def read_work_log(path: str | Path) -> Work:
    """The calls and prefilled tokens a log holds (a missing file is no work)."""
    calls = tokens = 0
    log = Path(path)
    if log.is_file():
        for line in log.read_text(encoding="utf-8").splitlines():
            if line.strip() and "use" not in (entry := json.loads(line)):
                calls += 1
                tokens += int(entry["prefilled"])
    return Work(calls, tokens)
