"""The one door a study runs through: ``nomad-lab study NAME``, ``nomad-lab sweep --dump`` and the
notebooks all call :func:`run_study`.

Why here and not in ``studies/``: a study may take hooks from this ring (``Study.hooks``), such as
the Dask verdict filler of :mod:`nomad_lab.runners.cluster`, which the studies ring may not import.
The study declares the hook by name and its ``run`` takes it as a keyword argument; this module opens
what the hook needs (a Dask client on ``params.scheduler`` or ``params.workers``) and builds it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.runners.cluster import dask_client, endpoints_by_spec, verdict_filler
from nomad_lab.studies.registry import get
from nomad_lab.studies.result import Result
from nomad_lab.studies.shape import Params, Study, declared, execute, resolve_params


def _fill_missing(client: Any, params: Params) -> Any:
    """The missing verdicts computed on the cluster (None: judged in-process). The judge study hands
    the grid exactly the inputs its own reuse rule finds missing, a sample's included."""
    if client is None:
        return None
    return verdict_filler(client, endpoints=endpoints_by_spec(params.endpoint, params.judge_model))


HOOKS: dict[str, Callable[[Any, Params], Any]] = {"fill_missing": _fill_missing}
"""Each hook a study may ask for, built from a Dask client (or None) and the study's parameters."""


@contextmanager
def _hooks(study: Study, params: Params) -> Iterator[dict[str, Any]]:
    if not study.hooks:
        yield {}
        return
    if params.scheduler and params.workers:
        raise NomadLabError(f"study {study.name}: give --workers or --scheduler, not both")
    with dask_client(params.scheduler, params.workers) as client:
        yield {name: HOOKS[name](client, params) for name in study.hooks}


def run_study(
    name: str, publish: Callable[[Result], dict[str, Path]] | None = None, **given: Any
) -> tuple[Any, dict[str, Path]]:
    """Run registered study ``name`` on ``given`` parameters (declared names; the rest default):
    rows stored, files written to ``out`` (default the study's ``out_dir``; None writes none).

    Returns the study's result and the files it wrote. A study that returns a
    :class:`~nomad_lab.studies.result.Result` writes nothing itself: ``publish`` (the publish ring's
    ``nomad_lab.publish.results.write``, which this ring may not import) writes it; without it there
    are no files. An unknown or out-of-range parameter is one ``NomadLabError`` line naming it.
    """
    study = get(name)
    params = resolve_params(declared(study), given, f"study {study.name}")
    with _hooks(study, params) as hooks:
        return execute(study, params, publish=publish, **hooks)
