"""The parameters many studies share (corpus, goldens, store, progress, a Dask cluster),
declared once, and the checks studies put on their own.

Why: ``--corpus``, ``--store`` or ``--no-progress`` mean one thing in every study; declared per study
they drift (names, help texts, defaults), as the hand-written parsers did. A study lists these beside
its own :class:`~nomad_lab.studies.shape.Param` declarations; ``suite``, ``floor`` and ``judge_model``
differ in their default per study, so they are made by :func:`suite_param`, :func:`floor_param` and
:func:`judge_param`. The floor's range check,
:func:`in_unit_interval`, is the one ``nomad-lab eval retrieval --floor`` uses too.
``RUN``, the gating studies' run, is in :mod:`nomad_lab.studies.gating.run_param`.
:func:`on_second_corpus` declares a study's published run over the repository's second corpus.
"""

from __future__ import annotations

import math
from pathlib import Path

from nomad_lab.backends.backend_spec import BACKEND_SPEC
from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE
from nomad_lab.core.workspace import DATASETS_DIR, DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR, DEFAULT_STORE_PATH
from nomad_lab.retrieval.embedder_spec import DEFAULT_EMBEDDER_SPEC, EMBEDDER_SPEC
from nomad_lab.retrieval.index_spec import DEFAULT_INDEX_SPEC, INDEX_SPEC
from nomad_lab.studies.shape import Output, Param, argv


def in_unit_interval(value: float) -> str | None:
    """A floor, a leak target or a rate: a number between 0 and 1 (NaN refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return f"must be a number between 0 and 1, got {value!r}"
    return None if 0 <= value <= 1 else f"must be between 0 and 1, got {value:g}"


def each_in_unit_interval(values: list[float] | tuple[float, ...]) -> str | None:
    """``in_unit_interval`` for every value of a list parameter (floors to report)."""
    return next((problem for v in values if (problem := in_unit_interval(v))), None)


def positive(value: int | float) -> str | None:
    """A count or a size: more than zero."""
    return None if value > 0 else f"must be positive, got {value:g}"


def each_positive(values: list[int] | tuple[int, ...]) -> str | None:
    return next((problem for v in values if (problem := positive(v))), None)


def not_negative(value: int | float) -> str | None:
    """A sample size where 0 means all, a worker count where 0 means none."""
    return None if value >= 0 else f"must be 0 or more, got {value:g}"


CORPUS = Param("corpus", Path, DEFAULT_CORPUS_DIR, "corpus directory (*.md)")
GOLDENS = Param("goldens", Path, DEFAULT_GOLDENS_DIR, "goldens directory (*.jsonl)")
DATASETS = Param(
    "datasets",
    Path,
    DATASETS_DIR,
    "the datasets folder the samples are drawn from (corpus, goldens, estimator_samples)",
)
STORE = Param("store", Path, DEFAULT_STORE_PATH, "workspace DuckDB store (NOMAD_LAB_STORE sets its default)")
PROGRESS = Param("no_progress", bool, False, "no progress bars", flag=True)
EMBEDDER = Param(
    "embedder",
    EMBEDDER_SPEC,
    None,
    f"embedder spec (default: {DEFAULT_EMBEDDER_SPEC})",
    metavar="SPEC",
)
INDEX = Param(
    "index",
    INDEX_SPEC,
    None,
    f"index searched for the candidate net: exact, hnsw[?m=..&ef_search=..], qdrant[:DIR] or "
    f"qdrant://HOST:PORT/COLLECTION (default: {DEFAULT_INDEX_SPEC})",
    metavar="SPEC",
)
WORKERS = Param(
    "workers", int, 0, "run the grid on a local Dask cluster of N processes", check=not_negative, metavar="N"
)
SCHEDULER = Param(
    "scheduler", str, None, "run the grid on a running Dask scheduler, e.g. tcp://host:8786", metavar="URL"
)
ENDPOINT = Param(
    "endpoint",
    str,
    (),
    "another server of the same judge model; each endpoint gets its own Dask worker (repeatable)",
    many=True,
    metavar="SPEC=ENDPOINT",
)
WORKSPACE = (CORPUS, GOLDENS, STORE, PROGRESS)
"""What every study that retrieves the goldens reads."""
CLUSTER = (WORKERS, SCHEDULER)
"""Where a study's grid runs: here (default), a LocalCluster of N processes, or a running scheduler."""


def suite_param(default: str, help: str = "suite(s): NAME, a,b or *") -> Param:
    return Param("suite", str, default, help)


def floor_param(
    default: float = RAG_MIN_FINAL_SCORE, help: str = "the floor the judge runs after", name: str = "floor"
) -> Param:
    """A relevance floor in [0, 1]; the reference's ``RAG_MIN_FINAL_SCORE`` unless the study says."""
    return Param(name, float, default, help, check=in_unit_interval)


def judge_param(default: str | tuple[str, ...] | None, help: str = "judge backend spec") -> Param:
    """``--judge-model SPEC``: the judge backend a study runs; required when it has no default, repeatable
    when the default is a tuple of specs (one row per model)."""
    many, required = isinstance(default, tuple), default is None
    return Param("judge_model", BACKEND_SPEC, default, help, many=many, required=required, metavar="SPEC")


def alpha_param(default: float, help: str = "leak target of the calibrated floor") -> Param:
    return Param("alpha", float, default, help, check=in_unit_interval)


SECOND_CORPUS = "datasets/corpora/pydocs"
"""The repository's second corpus (the Python tutorial and MDN), its ``corpus`` and ``goldens`` below it."""


def on_second_corpus(
    study: str, out_dir: str, tables: tuple[str, ...], what: str, options: str = ""
) -> Output:
    """``study`` run over :data:`SECOND_CORPUS` (with ``options``), published in ``out_dir/pydocs``: the
    declaration every study that is shown on both corpora shares."""
    return Output(
        f"{what} on a second corpus (pydocs: Python tutorial and MDN)",
        argv(
            f"study {study} --corpus {SECOND_CORPUS}/corpus --goldens {SECOND_CORPUS}/goldens "
            f"{options} --out {out_dir}/pydocs"
        ),
        f"{out_dir}/pydocs",
        (),
        tables,
    )
