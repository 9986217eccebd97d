"""The RUN parameter type: which retrieval run a gating study reads, as one value resolved in one place.

Why a value: every gating study used to build its own retrieval request ("retrieve unless ``--run``"),
each with its own defaults, and a stored run id was a bare string checked only when the study opened it.
Now ``--run`` (and a notebook's ``run``) is parsed at the edge into a :class:`RunChoice`:

    RUN_ID            a stored retrieval run
    main              the main job's run over the corpus (its newest ``core,off_topic`` run with the
                      distractors, found by fingerprint: :func:`nomad_lab.eval.stored_runs.main_run`)
    latest            the newest stored retrieval run
    retrieve          retrieve the study's suites now (its ``--suite``), at the study's floor
    retrieve:SUITES   retrieve these suites now (``core,off_topic``)

and :func:`resolve_run` turns it into a stored run id once, retrieving through the one request built here
(:func:`retrieve_run`) when the value says so. A missing run id is refused before any model loads. It is
the one resolver: the studies' ``--run``, the notebooks' ``run``, the explore view and the commands that
read a stored run (``gate fit``/``apply``/``export``, ``floors presets``, ``eval corpus --check``: their
``--run`` is :func:`parse_stored_run`, the first three forms) all read it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from nomad_lab.core import workspace
from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.first_run import first_run_line, shown
from nomad_lab.eval.gating.sitting_runs import EDITS_SUITE
from nomad_lab.eval.stored_runs import MAIN_RUN, MAIN_SUITE, main_run
from nomad_lab.store import Store, StoreError

LATEST = "latest"
RETRIEVE = "retrieve"
FORMS = (
    "RUN_ID (a stored retrieval run)",
    f"{MAIN_RUN} (the main job's {MAIN_SUITE} run over the corpus)",
    f"{LATEST} (the newest stored retrieval run)",
    f"{RETRIEVE} (the study's --suite, retrieved now)",
    f"{RETRIEVE}:SUITES (these suites, retrieved now)",
)
STORED_FORMS = FORMS[:3]
"""The forms naming a run already stored: what a command that never retrieves accepts."""
_RUN_ID = re.compile(r"[A-Za-z0-9][\w.:+-]*")


@dataclass(frozen=True)
class RunChoice:
    """A parsed RUN value: ``run_id`` (a stored run), ``main``, ``latest``, or retrieve now (``suites``:
    which; None: the study's own). ``str()`` gives the text back, which is what results record.

    ``pinned`` is the stored run a ``main`` or ``latest`` named when it was resolved at the edge
    (:func:`pin_run`), or why it named none (``missing``): every later reading (the study, its
    provenance record) gets that run, never the newest run at the time, which may be one the study
    stored itself (``study gates`` stores its bank run midway)."""

    run_id: str | None = None
    latest: bool = False
    suites: str | None = None
    main: bool = False
    pinned: str | None = None
    missing: str | None = None

    def __str__(self) -> str:
        if self.run_id is not None:
            return self.run_id
        if self.main:
            return MAIN_RUN
        if self.latest:
            return LATEST
        return RETRIEVE + (f":{self.suites}" if self.suites else "")

    @property
    def retrieves(self) -> bool:
        """True when resolving it retrieves now (a new stored run)."""
        return self.run_id is None and not self.latest and not self.main


RETRIEVE_NOW = RunChoice()
MAIN = RunChoice(main=True)


class NoSuchRun(NomadLabError):
    """The store (or the run a stored-run value names) is not there yet: the message says what to run."""


def parse_run(text: str | RunChoice | None) -> RunChoice:
    """``text`` as a :class:`RunChoice` (None or empty: retrieve the study's suites now); a malformed
    value is one :class:`NomadLabError` line listing the forms."""
    if isinstance(text, RunChoice):
        return text
    value = "" if text is None else str(text).strip()
    if value in ("", RETRIEVE):
        return RETRIEVE_NOW
    if value == LATEST:
        return RunChoice(latest=True)
    if value == MAIN_RUN:
        return MAIN
    if value.startswith(RETRIEVE + ":"):
        suites = value[len(RETRIEVE) + 1 :].strip()
        if not suites:
            raise NomadLabError(f"bad run {text!r}: no suites after '{RETRIEVE}:' (accepted: {forms_line()})")
        return RunChoice(suites=suites)
    if not _RUN_ID.fullmatch(value):
        raise NomadLabError(f"bad run {text!r}: not a run id (accepted: {forms_line()})")
    return RunChoice(run_id=value)


def parse_stored_run(text: str | RunChoice | None) -> RunChoice:
    """``text`` as a :class:`RunChoice` naming a stored run (a run id, ``main`` or ``latest``; None:
    ``latest``), for a command that reads a run and never retrieves one; any other value is one
    :class:`NomadLabError` line listing the forms it takes."""
    try:
        choice: RunChoice | None = parse_run(LATEST if text is None else text)
    except NomadLabError:
        choice = None
    if choice is None or choice.retrieves:
        why = "not a run id" if choice is None else "this command reads a stored run, it does not retrieve"
        raise NomadLabError(f"bad run {text!r}: {why} (accepted: {forms_line(STORED_FORMS)})") from None
    return choice


def forms_line(forms: tuple[str, ...] = FORMS) -> str:
    """The RUN forms (by default all of them) as one line, for a help text or an error."""
    return ", ".join(forms)


def run_forms() -> list[str]:
    return list(FORMS)


def retrieve_now(
    store_path: str | Path,
    *,
    corpus: str | Path,
    goldens: str | Path,
    suite: str,
    floor: float = 0.0,
    embedder: str | None = None,
    embedder_model: Any = None,
    progress: bool = False,
    **options: Any,
) -> Any:
    """Retrieve ``suite`` of ``goldens`` over ``corpus`` into the store now; the stored run
    (:class:`~nomad_lab.eval.retrieval_service.RetrievalRun`: ``run_id`` and the index build's facts).

    ``embedder`` is a spec (None: the default); ``embedder_model`` an already loaded embedder to reuse.
    ``options`` are the rest of :class:`~nomad_lab.eval.retrieval_service.RetrievalRequest` (``standalone``,
    ``include_distractors``, ``drafts``). This is the one retrieval request the gating code builds."""
    from nomad_lab.eval.retrieval_service import RetrievalRequest, retrieve  # heavy (torch, the index)

    request = RetrievalRequest(
        corpus_dir=Path(corpus),
        goldens_dir=Path(goldens),
        suite=suite,
        floor=floor,
        store_path=Path(store_path),
        embedder=embedder,
        progress=progress,
        **options,
    )
    return retrieve(request, embedder_model)


def retrieve_run(store_path: str | Path, **retrieval: Any) -> str:
    """:func:`retrieve_now`'s stored run id."""
    return str(retrieve_now(store_path, **retrieval).run_id)


def stored_run(store_path: str | Path, choice: RunChoice, corpus: str | Path | None = None) -> Any | None:
    """The stored run a choice names without retrieving (its :class:`~nomad_lab.store.RunRecord`: id,
    corpus fingerprint, parameters; None for "retrieve now"); ``main`` is the main job's run over
    ``corpus`` (None: the default corpus). A store, run id, main or latest run that is not there is one
    :class:`NoSuchRun` line naming what to run; a run of another kind one error line."""
    if choice.retrieves:
        return None

    path = Path(store_path)
    if choice.missing is not None:
        raise NoSuchRun(choice.missing)
    if not path.is_file():
        raise NoSuchRun(_store_first(f"{path}: no store yet, so no run {choice}", choice, corpus))
    with Store(path, read_only=True) as store:
        if choice.pinned is not None:
            run_id = choice.pinned
        elif choice.main:
            run_id = main_run(store, corpus)
            if run_id is None:
                over = f"{path}: no {MAIN_SUITE} run over {shown(corpus)} stored yet"
                raise NoSuchRun(_store_first(over, choice, corpus))
        elif choice.latest:
            run_id = newest_run(store)
            if run_id is None:
                raise NoSuchRun(_store_first(f"{path}: no retrieval run stored yet", choice, corpus))
        else:
            run_id = str(choice.run_id)
        try:
            run = store.get_run(run_id)
        except StoreError:
            raise NoSuchRun(
                f"{path}: no run {run_id!r} stored (give one it holds, {MAIN_RUN} or {LATEST}; "
                f"list them: nomad-lab store runs --store {path})"
            ) from None
    if run.kind != "retrieval":
        raise NomadLabError(f"{path}: run {run_id!r} is a {run.kind} run, not a retrieval run")
    return run


def newest_run(store: Any) -> str | None:
    """The run ``latest`` names in an open store: the newest retrieval run, passing over the edited
    wordings of a labelling sitting that stores kept as retrieval runs before edits had a kind of their
    own (suite ``label-edits``)."""
    for run_id in reversed(store.run_ids("retrieval")):
        if store.get_run(run_id).suite != EDITS_SUITE:
            return run_id
    return None


def stored_run_id(store_path: str | Path, choice: RunChoice, corpus: str | Path | None = None) -> str | None:
    """:func:`stored_run`'s run id."""
    run = stored_run(store_path, choice, corpus)
    return None if run is None else str(run.run_id)


def _store_first(missing: str, choice: RunChoice, corpus: str | Path | None) -> str:
    """The line saying ``missing`` and what to run before ``choice`` names a stored run: the first-run
    command for ``main`` and ``latest`` (:func:`nomad_lab.core.first_run.first_run_line`)."""
    if choice.main or choice.latest:
        return first_run_line(missing, corpus)
    return f"{missing}: give a stored run id, or retrieve first (--run {RETRIEVE})"


def named_runs(
    store_path: str | Path | None, values: Any, corpus: str | Path | None = None
) -> dict[str, str]:
    """The stored runs a RUN value (or a list of them) names, for a provenance record: each run's id and
    its corpus fingerprint (read as the run is found), ``latest`` and ``main`` (over ``corpus``, None: the
    default corpus) as the runs they name now, in the store at ``store_path`` (None: the workspace's).
    "Retrieve now" names none (its run is stored during the command, which the record finds by time),
    and neither does anything the store cannot answer (a run it lacks, a lock another process holds)."""
    texts = values if isinstance(values, list | tuple) else [values] if values else []
    found: dict[str, str] = {}
    for text in texts:
        try:
            run = stored_run(store_path or workspace.DEFAULT_STORE_PATH, parse_run(text), corpus)
        except NomadLabError:
            continue
        if run is not None:
            found[str(run.run_id)] = str(run.fingerprint)
    return found


def pin_run(store_path: str | Path | None, value: Any, corpus: str | Path | None = None) -> Any:
    """A RUN value (or a list of them) with each ``main`` and ``latest`` pinned to the stored run it
    names now (:attr:`RunChoice.pinned`), in the store at ``store_path`` (None: the workspace's): done
    once where a command's or a notebook's parameters are resolved, so the study and its provenance
    record read the same run. A value naming no run yet keeps why (:attr:`RunChoice.missing`), raised
    only if the run is read; a run id or "retrieve now" is kept as it is."""
    if isinstance(value, list | tuple):
        return type(value)(pin_run(store_path, v, corpus) for v in value)
    if value is None:
        return None
    choice = parse_run(value)
    if not (choice.main or choice.latest) or choice.pinned is not None or choice.missing is not None:
        return choice
    try:
        return replace(
            choice, pinned=stored_run_id(store_path or workspace.DEFAULT_STORE_PATH, choice, corpus)
        )
    except NoSuchRun as exc:
        return replace(choice, missing=str(exc))


def resolve_run(store_path: str | Path, run: str | RunChoice | None, **retrieval: Any) -> str:
    """The stored retrieval run ``run`` names, retrieving now when it says so: ``retrieval`` holds what
    :func:`retrieve_run` needs then (``corpus``, ``goldens``, ``suite``, ...; ``retrieve:SUITES``
    replaces ``suite``). ``main`` is the main job's run over ``retrieval``'s ``corpus`` (None: the
    default corpus)."""
    choice = parse_run(run)
    stored = stored_run_id(store_path, choice, retrieval.get("corpus"))
    if stored is not None:
        return stored
    if choice.suites:
        retrieval["suite"] = choice.suites
    missing = sorted({"corpus", "goldens", "suite"} - set(retrieval))
    if missing:
        raise NomadLabError(
            f"run {choice}: retrieving now needs {', '.join(missing)}; "
            f"give a stored run instead (RUN_ID, {MAIN_RUN} or {LATEST})"
        )
    return retrieve_run(store_path, **retrieval)
