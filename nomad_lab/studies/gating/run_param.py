"""The gating studies' ``--run``: one RUN value, resolved once by the gating service.

Why a module of the gating half: every gating study reads ``Params -> run -> service -> rows``; the run
is a :class:`~nomad_lab.eval.gating.runs.RunChoice` parsed at the edge (a stored run id, ``main``,
``latest``, ``retrieve`` or ``retrieve:SUITES``) and :func:`study_run` turns it into a stored run id through
:func:`~nomad_lab.eval.gating.runs.resolve_run`, which holds the one retrieval request gating builds.
The budgeting half never reads a retrieval run, so this stays out of the shared parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nomad_lab.eval.gating.runs import (
    LATEST,
    STORED_FORMS,
    forms_line,
    named_runs,
    parse_run,
    parse_stored_run,
    pin_run,
    resolve_run,
)
from nomad_lab.studies.params import CORPUS, EMBEDDER, GOLDENS, INDEX, STORE
from nomad_lab.studies.shape import Param, Params


def named_by(value: Any, values: Mapping[str, Any]) -> dict[str, str]:
    """A RUN parameter's ``names_runs``: the stored runs ``value`` names now (``main``: over the study's
    ``--corpus``) with their corpus fingerprints, for its provenance record."""
    return named_runs(values.get("store"), value, values.get("corpus"))


def pinned(value: Any, values: Mapping[str, Any]) -> Any:
    """A RUN parameter's ``pin``: ``main`` and ``latest`` pinned to the stored run they name when the
    study starts (``main``: over the study's ``--corpus``), so the run read and the run recorded agree."""
    return pin_run(values.get("store"), value, values.get("corpus"))


RUN = Param(
    "run",
    parse_run,
    None,
    "the retrieval run read: RUN_ID (stored), main (the main job's run over --corpus), latest, "
    "retrieve (--suite, now: the default) or retrieve:SUITES",
    metavar="RUN",
    names_runs=named_by,
    pin=pinned,
)


RUN_INPUTS = (
    RUN,
    STORE,
    CORPUS,
    GOLDENS,
    Param("suite", str, "core,off_topic,hard_refusals?", "suites to retrieve when no --run is given"),
    EMBEDDER,
    INDEX,
)
"""The parameters of a study that reads a stored run or retrieves one (:func:`study_run`): the run, its
store, the corpus and goldens, the suites, the embedder and the index, declared once."""


def stored_run_help(what: str = "the stored retrieval run read") -> str:
    """A stored-run ``--run``'s help: what the command reads it for, then the forms it takes."""
    return f"{what}: {forms_line(STORED_FORMS)} (default: {LATEST})"


STORED_RUN = Param("run", parse_stored_run, None, stored_run_help(), metavar="RUN")
"""The ``--run`` of a command that reads a stored run and never retrieves (``gate fit``, ``floors
presets``, ``eval corpus --check``); None is ``latest``."""


GATED = {"standalone": True}
"""How a study that fits or pairs a gate retrieves a run of its own: each follow-up by its standalone
rewrite, as the gates are fitted (``study gates``), so its rows sit on the same pools as theirs. The
judge studies keep the reference's retrieval (a follow-up by its literal text)."""


def study_run(p: Params, run: Any = None, **retrieval: Any) -> str:
    """The study's ``--run`` (or ``run``, another RUN value it declares) resolved once by the gating
    service: the stored run it names (``main``: the main job's run over its ``--corpus``), or its
    ``--suite`` of ``--corpus``/``--goldens`` (with its ``--embedder``) retrieved now at floor 0.
    ``retrieval`` overrides those (``floor``, ``standalone``, another ``corpus`` ...)."""
    given = p.as_dict()
    defaults: dict[str, Any] = {
        "corpus": given.get("corpus"),
        "goldens": given.get("goldens"),
        "suite": given.get("suite"),
        "embedder": given.get("embedder"),
        "index": given.get("index"),
        "progress": not given.get("no_progress", True),
    }
    asked = {k: v for k, v in (defaults | retrieval).items() if v is not None}
    return resolve_run(p.store, run if run is not None else given.get("run"), **asked)
