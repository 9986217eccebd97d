"""One shape for every study: parameters -> result (its rows stored) -> markdown, plot and files.

Why: each study used to have its own entry point, writer and way of storing its rows, so the CLI, the
main job and the gallery each needed to know every study by heart. A study module now ends with one
``STUDY = Study(...)`` naming its four steps and what it publishes; :mod:`nomad_lab.studies.registry`
finds it, ``nomad-lab study NAME``, ``nomad-lab reproduce`` and ``results/index.html`` read it, and
:func:`execute` runs it the same way for the CLI and the notebooks. Adding a study is one module.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Study:
    """A study's steps and what it publishes.

    ``run(params)`` computes a result from keyword parameters (the CLI's options by their dest names);
    ``rows(result)`` are the JSON rows stored in the store's ``study_rows`` under ``name``;
    ``markdown(result)`` is what the command prints; ``write(result, out_dir)`` writes the files
    (tables, JSON, plots) and returns them by kind.

    ``out_dir`` (relative to the project root), ``figures`` and ``tables`` (file names in it) are what
    the gallery shows; ``command`` is the ``nomad-lab`` argv that publishes it. ``published`` says
    whether ``nomad-lab reproduce`` runs that command (else the gallery names it as the way to make
    the figure), ``stage`` orders the steps of the main job, and ``budget_s`` is the measured time
    it may take there.
    """

    name: str
    title: str
    run: Callable[[Mapping[str, Any]], Any]
    rows: Callable[[Any], list[dict[str, Any]]]
    markdown: Callable[[Any], str]
    write: Callable[[Any, Path], dict[str, Path]]
    out_dir: str
    command: tuple[str, ...]
    figures: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    published: bool = True
    stage: int = 50
    budget_s: float | None = None


def stored_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-able parameters a study ran with, as stored beside its rows (hooks and handles left out)."""
    kept = {k: v for k, v in params.items() if not callable(v)}
    return json.loads(json.dumps(kept, default=str))


def execute(
    study: Study, params: Mapping[str, Any], out_dir: str | Path | None, store_path: str | Path | None = None
) -> tuple[Any, dict[str, Path]]:
    """Run ``study``, store its rows (a dict result gets the run id as ``run_id``), write its files.

    ``out_dir`` None stores the rows and writes nothing (a study whose files are optional).
    """
    from nomad_lab.store import record_study_rows

    result = study.run(params)
    run_id = record_study_rows(study.name, stored_params(params), study.rows(result), store_path)
    if isinstance(result, dict):
        result["run_id"] = run_id
    paths = study.write(result, Path(out_dir)) if out_dir is not None else {}
    return result, paths
