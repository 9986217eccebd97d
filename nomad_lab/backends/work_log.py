"""The model work a process did, counted where it happens: tokens llama.cpp prefilled, per call.

Why: wall time depends on the machine (a 2-core AVX2 box took 1.7x what an AVX-512 one did for the
same main job), so the main job's manifest also records the work itself. Every embedded llama.cpp
evaluation reports here; when ``NOMAD_LAB_WORK_LOG`` names a file, each call appends one JSON line to
it, so work done in notebook kernels and Dask workers (other processes) is counted too. ``nomad-lab
reproduce`` points it at one file per step and sums it with :func:`read_work_log`.
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
            if line.strip():
                calls += 1
                tokens += int(json.loads(line)["prefilled"])
    return Work(calls, tokens)
