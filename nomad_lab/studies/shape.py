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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError


@dataclass(frozen=True)
class Param:
    """One parameter of a study, declared once.

    The CLI option (``--name-with-dashes``), the notebook's papermill default and the typed object the
    study's ``run`` receives are all generated from this declaration, so a renamed option cannot fall
    back to a default unnoticed. ``type`` turns a command-line string into the value (``str``, ``int``,
    ``float``, ``Path`` or any one-argument parser); ``check`` returns an error message for a value it
    refuses, or None. ``many`` takes one or more values (a list); ``flag`` is a boolean switch
    (``--name``, default False); ``required`` has no default.
    """

    name: str
    type: Callable[[str], Any]
    default: Any
    help: str
    check: Callable[[Any], str | None] | None = None
    many: bool = False
    flag: bool = False
    required: bool = False
    metavar: str | None = None

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")


class Params:
    """A study's parameters as attributes; reading one the study did not declare is an error.

    Why not a dict: ``params.get("books", 3)`` silently falls back when an option is renamed;
    ``params.books`` fails loudly instead.
    """

    def __init__(self, values: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name not in values:
            raise AttributeError(f"no parameter {name!r} (declared: {', '.join(sorted(values))})")
        return values[name]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("study parameters are read-only")

    def as_dict(self) -> dict[str, Any]:
        return dict(object.__getattribute__(self, "_values"))


def resolve_params(declared: tuple[Param, ...], given: Mapping[str, Any], where: str) -> Params:
    """``given`` checked against ``declared``: unknown names refused, defaults filled, checks run.

    ``where`` names the study in the one-line error (``study growth: --books: ...``).
    """
    known = {p.name: p for p in declared}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise NomadLabError(f"{where}: unknown parameter(s) {', '.join(unknown)} (known: {', '.join(known)})")
    values: dict[str, Any] = {}
    for p in declared:
        if p.name in given:
            value = given[p.name]
        elif p.required:
            raise NomadLabError(f"{where}: {p.option} is required")
        else:
            value = p.default
        if p.check is not None and value is not None:
            problem = p.check(value)
            if problem:
                raise NomadLabError(f"{where}: {p.option} {value!r}: {problem}")
        values[p.name] = value
    return Params(values)


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
    it may take there. ``params`` declares every parameter ``run`` reads (see :class:`Param`).
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
    params: tuple[Param, ...] = ()


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

    started = datetime.now(UTC)
    result = study.run(params)
    run_id = record_study_rows(study.name, stored_params(params), study.rows(result), store_path)
    if isinstance(result, dict):
        result["run_id"] = run_id
    paths = study.write(result, Path(out_dir)) if out_dir is not None else {}
    if out_dir is not None:
        paths["provenance"] = record_provenance(params, run_id, started, out_dir, store_path)
    return result, paths


def record_provenance(
    params: Mapping[str, Any],
    run_id: str,
    started: datetime,
    out_dir: str | Path,
    store_path: str | Path | None,
) -> Path:
    """``out_dir/provenance.json`` beside the files a study wrote: its commit, dirty, command line, run
    id, the corpora it read (runs stored since it started, or named by its ``run`` parameter), its
    embedders and model digests (:func:`nomad_lab.eval.provenance.provenance_record`)."""
    from nomad_lab.eval.provenance import provenance_record, stored_fingerprints, write_provenance  # heavy

    kept = stored_params(params)
    fingerprints = stored_fingerprints(store_path, started, [str(kept["run"])] if kept.get("run") else [])
    record = provenance_record(params=kept, run_id=run_id, fingerprints=fingerprints)
    return write_provenance(out_dir, record)
