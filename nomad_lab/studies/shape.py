"""One shape for every study: parameters -> result (its rows stored) -> markdown, plot and files.

Why: each study used to have its own entry point, writer and way of storing its rows, so the CLI, the
main job and the gallery each needed to know every study by heart. A study module now ends with one
``STUDY = Study(...)`` naming its four steps, its parameters and what it publishes;
:mod:`nomad_lab.studies.registry` finds it, ``nomad-lab study NAME`` (its options generated from
``STUDY.params``), ``nomad-lab reproduce``, ``results/index.html`` and the notebooks read it, and
:func:`execute` runs it the same way for all of them. Adding a study is one module.

Converting a study that parses its own options (an argparse block in ``cli/``) takes four steps:

1. declare each option once in the module, as a :class:`Param` named like its argparse dest
   (``--judge-model`` -> ``judge_model``); reuse the shared ones of :mod:`nomad_lab.studies.params`
   (``CORPUS``, ``GOLDENS``, ``STORE`` (every study has it: its rows go there), ``PROGRESS``,
   ``CLUSTER``; a gating study's ``RUN`` is in ``studies.gating.run_param``; ``floor_param(default)``
   checks the range) and put a range check in ``check``;
2. make ``run`` take the :class:`Params` and read ``params.judge_model``: its default is the
   declaration's, never a second ``params.get(name, default)``;
3. end the module with ``STUDY = Study(name=..., title=..., run=compute, ...)``, the module named like
   the study (``-`` in a name is ``_`` in the module: ``per-passage`` lives in ``per_passage.py``); its
   ``PARAMS``, ``rows``, ``result`` and ``pages`` beside ``compute`` are found there (:data:`STEPS`),
   and ``--out`` is generated from ``out_dir`` (``results/MODULE`` unless it says);
4. delete the argparse block and its runner: ``nomad-lab study NAME`` now exists, with help text,
   defaults and types from the declaration (``nomad_lab.cli.study``), and a notebook calls
   ``nomad_lab.runners.studies.run_study(NAME, ...)`` with the declared names.

For example (``NEW_STUDY`` in ``tests/studies/test_registry.py`` is a whole study, dropped into a half)::

    PARAMS = (Param("sample", int, 40, "questions judged (0: all)", check=not_negative), STORE)

    def compute(params: Params) -> list[dict]:
        return [...]  # reads params.sample; a ``def result(raw) -> Result`` beside it

    STUDY = Study(name="gates", title="...", run=compute, rows=lambda raw: raw)
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.spec_text import SpecText
from nomad_lab.core.workspace import PROJECT_ROOT
from nomad_lab.eval.provenance import (
    provenance_record,
    stored_fingerprints,
)
from nomad_lab.store import record_study_rows
from nomad_lab.studies.result import Page, Result


@dataclass(frozen=True)
class Param:
    """One parameter of a study, declared once.

    The CLI option (``--name-with-dashes``), the notebook's papermill default and the typed object the
    study's ``run`` receives are all generated from this declaration, so a renamed option cannot fall
    back to a default unnoticed. ``type`` turns a command-line string into the value (``str``, ``int``,
    ``float``, ``Path`` or any one-argument parser); ``check`` returns an error message for a value it
    refuses, or None. ``many`` takes one or more values (a list); ``flag`` is a boolean switch
    (``--name``, default False); ``required`` has no default.

    ``names_runs`` is for a parameter that names stored runs (a gating study's RUN): from its value and
    the study's values it gives the runs the value names now, ``{run id: corpus fingerprint}``, which the
    provenance record keeps (so ``--run main`` records the run it meant). The half that reads runs
    declares it; this shape, shared by both halves, imports none of that.

    ``pin`` turns a value into what it names now, once, where the parameters are resolved (the edge:
    the CLI, a notebook, a Python caller; :func:`resolve_params`), from the value and the study's other
    values: a RUN's ``latest`` becomes the stored run it names when the study starts, which is then the
    run the study reads and the run its provenance names, even if the study stores another run midway.
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
    names_runs: Callable[[Any, Mapping[str, Any]], Mapping[str, str]] | None = None
    pin: Callable[[Any, Mapping[str, Any]], Any] | None = None

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

    def __contains__(self, name: object) -> bool:
        return name in object.__getattribute__(self, "_values")

    def __repr__(self) -> str:
        return f"Params({object.__getattribute__(self, '_values')!r})"

    def as_dict(self) -> dict[str, Any]:
        return dict(object.__getattribute__(self, "_values"))


TRUE_WORDS, FALSE_WORDS = ("true", "yes", "1", "on"), ("false", "no", "0", "off", "")


def typed(param: Param, value: Any) -> Any:
    """``value`` as ``param.type`` makes it, the way argparse would have from the command line, so a
    notebook or Python caller gets the same typed value (``"5"`` -> 5) or a ValueError saying why.

    A value that already has the type is kept; a flag takes a bool or a yes/no word; an int refuses a
    fraction and a number refuses a bool (``int(2.7)`` or ``float(True)`` would hide a mistake); a
    ``many`` parameter given one value gets a one-element list.
    """
    if param.many:
        many = isinstance(value, Iterable) and not isinstance(value, str | bytes | Path | Mapping)
        values = list(value) if many else [value]  # a list, a tuple, a numpy array ...
        return [typed(Param(param.name, param.type, None, ""), v) for v in values]
    kind = bool if param.flag else param.type
    if kind is bool:
        if isinstance(value, bool):
            return value
        word = str(value).strip().lower()
        if word not in TRUE_WORDS + FALSE_WORDS:
            raise ValueError("must be true or false")
        return word in TRUE_WORDS
    if kind in (int, float) and isinstance(value, bool):
        raise ValueError(f"must be a number, not {value}")
    if isinstance(kind, type) and isinstance(value, kind):
        return value
    if kind is int and isinstance(value, float) and not value.is_integer():
        raise ValueError("must be a whole number")
    if not isinstance(kind, type) and not isinstance(value, str):
        return value  # a parser's own value (a parsed spec), already past the edge
    return kind(value)


def why(param: Param, exc: Exception) -> str:
    """The first line of a refusal, with the accepted forms when the type is a spec (one line)."""
    text = str(exc).strip()
    reason = text.splitlines()[0] if text else type(exc).__name__
    if isinstance(param.type, SpecText) and "accepted" not in reason:
        reason += f"; accepted forms: {', '.join(param.type.forms())}"
    return reason


def resolve_params(declared: tuple[Param, ...], given: Mapping[str, Any], where: str) -> Params:
    r"""``given`` checked against ``declared``: unknown names refused, defaults filled, given values
    turned into their declared type (:func:`typed`), checks run, then each value a parameter ``pin``\ s
    pinned to what it names now (once: a :class:`Params` passed on is never resolved again).

    ``where`` names the study in the one-line error (``study growth: --books: ...``). A ``None`` given
    for a ``Path`` parameter means its default: the workspace convention of
    :func:`nomad_lab.core.workspace.in_workspace` (a notebook's ``store = None`` is the workspace store).
    """
    known = {p.name: p for p in declared}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise NomadLabError(f"{where}: unknown parameter(s) {', '.join(unknown)} (known: {', '.join(known)})")
    values: dict[str, Any] = {}
    for p in declared:
        if p.name in given and not (given[p.name] is None and p.type is Path and not p.required):
            value = given[p.name]
            if value is not None:
                try:
                    value = typed(p, value)
                except (ValueError, TypeError, NomadLabError) as exc:
                    raise NomadLabError(f"{where}: {p.option} {value!r}: {why(p, exc)}") from None
        elif p.required:
            raise NomadLabError(f"{where}: {p.option} is required")
        else:
            value = p.default
        if p.check is not None and value is not None:
            problem = p.check(value)
            if problem:
                raise NomadLabError(f"{where}: {p.option} {value!r}: {problem}")
        values[p.name] = value
    for p in declared:  # once every value is known: a pin reads the others (a RUN's store and corpus)
        if p.pin is not None and values[p.name] is not None:
            values[p.name] = p.pin(values[p.name], values)
    return Params(values)


def argv(line: str) -> tuple[str, ...]:
    """A ``nomad-lab`` command line (without ``nomad-lab``) as the argv a study's ``command`` holds."""
    return tuple(shlex.split(line))


@dataclass(frozen=True)
class Output:
    """Another published run of a study: the same study with other options, in its own folder.

    ``prefix`` is what must be set before the command (``NOMAD_LAB_MODELS=...``), shown with it.
    """

    title: str
    command: tuple[str, ...]
    out_dir: str
    figures: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    prefix: str = ""


STEPS = {"rows": "rows", "result": "result", "pages": "pages", "params": "PARAMS"}  # field: name beside run


@dataclass(frozen=True)
class Study:
    """A study's steps and what it publishes.

    ``run(params)`` computes a result from the :class:`Params` resolved against ``params`` (plus
    ``out``, the folder the files go to, generated from ``out_dir``; see :func:`declared`);
    ``rows(result)`` are the JSON rows stored in the store's ``study_rows`` under ``name``;
    ``result(result)`` is the published value (:class:`~nomad_lab.studies.result.Result`: its documents,
    tables, figures), which the publish ring's one writer writes and whose first page the command
    prints; no study writes a file itself. ``pages(document)`` builds its markdown pages from its stored
    JSON ``document`` (a file name in ``out_dir``) alone, so the committed pages can be checked and
    rebuilt without a rerun.

    ``out_dir`` (relative to the project root), ``figures`` and ``tables`` (file names in it) are what
    the gallery shows; ``command`` is the ``nomad-lab`` argv that publishes it. What follows from the
    name is derived where a declaration leaves it out: ``out_dir`` ``results/MODULE``, ``command``
    ``study NAME``, ``document`` (with ``pages``) ``MODULE.json`` and ``tables`` the page of that
    document (``MODULE.md`` without one); ``tables=()`` declares none. ``rows``, ``result``, ``pages``
    and ``params`` left out are the module's of ``run`` (:data:`STEPS`: its ``rows``, ``result``,
    ``pages``, ``PARAMS``): a declaration names only steps it does not keep beside ``run``. ``published``
    says whether ``nomad-lab reproduce`` runs that command (else the gallery names it as the way to make
    the figure), ``stage`` orders the steps of the main job, and ``budget_s`` is the measured time
    it may take there. ``params`` declares every parameter ``run`` reads (see :class:`Param`).

    ``notebook`` names the notebook (``notebooks/NAME.py``) that runs this study: its papermill
    parameters must match the declaration (``tests/studies/test_declarations.py``). ``hooks`` name
    keyword arguments ``run`` takes beside the parameters, provided by the runner ring
    (``nomad_lab.runners.studies``: ``fill_missing`` computes missing judge verdicts on Dask first).
    ``also`` lists other published runs of the study (another model, another library), ``prefix``
    what must be set before ``command``.
    """

    name: str
    title: str
    run: Callable[..., Any]  # (params: Params, **hooks) -> result
    rows: Callable[[Any], list[dict[str, Any]]] | None = None  # derived: STEPS
    out_dir: str = ""  # derived: results/MODULE
    command: tuple[str, ...] = ()  # derived: study NAME
    figures: tuple[str, ...] = ()
    tables: tuple[str, ...] | None = None  # derived: the document's page, else MODULE.md
    published: bool = True
    stage: int = 50
    budget_s: float | None = None
    params: tuple[Param, ...] | None = None  # derived: STEPS, else none
    notebook: str | None = None
    hooks: tuple[str, ...] = ()
    also: tuple[Output, ...] = ()
    prefix: str = ""
    result: Callable[[Any], Result] | None = field(default=None, kw_only=True)  # derived: STEPS
    document: str | None = field(default=None, kw_only=True)
    pages: Callable[[Mapping[str, Any]], tuple[Page, ...]] | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        module = sys.modules.get(getattr(self.run, "__module__", None) or "")
        beside = vars(module) if module is not None else {}  # what the module of run defines
        for name, step in STEPS.items():
            if getattr(self, name) is None and step in beside:
                object.__setattr__(self, name, beside[step])
        if self.rows is None or self.result is None:
            raise ValueError(f"study {self.name}: give rows= and result=, or define them beside run")
        if self.params is None:
            object.__setattr__(self, "params", ())
        if self.document is not None and self.pages is None:
            raise ValueError(f"study {self.name}: pages= builds from a document=: give both or neither")
        document = self.document or (f"{self.module_name}.json" if self.pages is not None else None)
        page = f"{Path(document or self.module_name).stem}.md"
        derived = {
            "out_dir": self.out_dir or f"results/{self.module_name}",
            "command": self.command or ("study", self.name),
            "document": document,
            "tables": (page,) if self.tables is None else self.tables,
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    def documented(self, raw: Any, document: Mapping[str, Any], **more: Any) -> Result:
        """The value of a study that publishes one JSON ``document`` and the pages built from it (its
        ``document=`` file and ``pages=``), with ``more`` (artefacts, JSONL lines) beside them."""
        if self.document is None or self.pages is None:
            raise ValueError(f"study {self.name}: documented() needs document= and pages=")
        json = {self.document: document, **more.pop("json", {})}
        return Result(self.name, value=raw, json=json, pages=self.pages(document), **more)

    @property
    def module_name(self) -> str:
        """The module the study lives in: its name with ``_`` for ``-`` (``per_passage.py``)."""
        return self.name.replace("-", "_")


def out_param(study: Study) -> Param:
    """``--out``: where the files go, by default the study's ``out_dir`` under the project root."""
    return Param(
        "out",
        Path,
        PROJECT_ROOT / study.out_dir,
        "where the tables and plots go",
        metavar="DIR",
    )


def declared(study: Study) -> tuple[Param, ...]:
    """Every parameter of ``study``: its own, then ``out``."""
    return (*study.params, out_param(study))


def stored_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-able parameters a study ran with, as stored beside its rows (``out`` left out: where
    the files went is not what was measured)."""
    kept = {k: v for k, v in params.items() if k != "out" and not callable(v)}
    return json.loads(json.dumps(kept, default=str))


def execute(
    study: Study,
    params: Params | Mapping[str, Any],
    *,
    publish: Callable[[Result], dict[str, Path]] | None = None,
    **hooks: Any,
) -> tuple[Result, dict[str, Path]]:
    """Run ``study`` and store its rows (a dict result gets the run id as ``run_id``).

    Returns the study's :class:`~nomad_lab.studies.result.Result` (provenance and folder set); nothing
    is written here: ``publish`` (the publish ring's writer, passed down by the command) writes it and
    gives the files, else there are none.

    A mapping is resolved against :func:`declared` first. The rows go to ``params.store`` when the study
    declares one (else the workspace store). ``hooks`` are passed to ``run`` as keyword arguments (see
    ``Study.hooks``).
    """
    if not isinstance(params, Params):
        params = resolve_params(declared(study), params, f"study {study.name}")
    started = datetime.now(UTC)
    result = study.run(params, **hooks)
    values = params.as_dict()
    run_id = record_study_rows(study.name, stored_params(values), study.rows(result), values.get("store"))
    if isinstance(result, dict):
        result["run_id"] = run_id
    record = provenance_of(values, run_id, started, values.get("store"), declared(study))
    out = Path(params.out) if params.out is not None else None
    value = study.result(result).placed(provenance=record, out=out)
    return value, (publish(value) if publish is not None and out is not None else {})


def provenance_of(
    params: Mapping[str, Any],
    run_id: str,
    started: datetime,
    store_path: str | Path | None,
    params_declared: Iterable[Param] = (),
) -> dict[str, Any]:
    """The provenance record of a study's run: its commit, dirty, command line, run id, the corpora it
    read (runs stored since it started, the runs a parameter declaring ``names_runs`` names, with their
    fingerprints under ``namedRuns``, or the ids its plain ``run`` parameter gives), its embedders and
    model digests (:func:`nomad_lab.eval.provenance.provenance_record`)."""
    kept = stored_params(params)
    named: dict[str, str] = {}
    for param in params_declared:
        if param.names_runs is not None and params.get(param.name) is not None:
            named |= param.names_runs(params[param.name], params)
    plain = not any(p.name == "run" and p.names_runs for p in params_declared)
    given_run = kept.get("run") if plain else None
    runs = (
        [str(r) for r in given_run] if isinstance(given_run, list) else [str(given_run)] if given_run else []
    )
    fingerprints = stored_fingerprints(store_path, started, runs)
    if fingerprints is not None:
        fingerprints = [*named.values(), *fingerprints]
    return provenance_record(params=kept, run_id=run_id, fingerprints=fingerprints, named_runs=named)
