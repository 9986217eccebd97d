"""Notebook grids: every cell is one papermill execution of a parameterized notebook, kept under results/.

Why cells and keys: a researcher sweeps a notebook over a grid of parameters (``-p alpha 0.05 -p alpha
0.10`` is a grid of two) and reruns the sweep after an interruption or a change. A cell's key hashes the
notebook's source, its parameters and the bytes of every parameter that names a file (a dump, say), so
a rerun skips exactly the cells whose inputs did not change. A cell counts as computed only once its
``cell.json`` is written, last and atomically, so a cell killed midway is simply run again.

Each cell runs in its own folder ``results/notebooks/<notebook>/<key>/``: the executed notebook, the
``cell.json`` record (parameters, seconds, git sha) and, when the notebook declares an ``out_dir``
parameter and the grid does not set one, every file the notebook writes (PNG and SVG plots, tables).

A project notebook's source is its jupytext percent script ``notebooks/NAME.py``: the ``.ipynb`` twin
JupyterLab saves beside it holds a person's outputs and is git-ignored (``notebooks/jupytext.toml``), so
a cell runs the tracked script, turned into a notebook in a temporary folder, never the twin.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.workspace import DEFAULT_STORE_PATH, PROJECT_ROOT, RESULTS_DIR
from nomad_lab.eval.provenance import git_state, portable, provenance_record, write_provenance
from nomad_lab.store import LOCK_WAIT_ENV, Store

NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
DEFAULT_GRID_ROOT = RESULTS_DIR / "notebooks"
CELL_STORE_WAIT_S = 3600


class NotebookGridError(NomadLabError, ValueError):
    """A notebook or a parameter of the grid does not exist or cannot be parsed."""


def project_notebooks() -> list[Path]:
    """The project's notebooks: the tracked percent scripts under ``notebooks/``."""
    return sorted(NOTEBOOKS_DIR.glob("*.py"))


def notebook_path(name: str | os.PathLike[str]) -> Path:
    """``floor_sweep``, ``floor_sweep.py``, ``floor_sweep.ipynb`` or a path: the notebook's source (a
    project notebook's tracked script, whichever spelling names it), or a clear error."""
    candidate = Path(name)
    script = NOTEBOOKS_DIR / f"{candidate.stem}.py"
    in_project = candidate.parent == Path() or candidate.resolve().parent == NOTEBOOKS_DIR.resolve()
    if candidate.suffix in ("", ".py", ".ipynb") and in_project and script in project_notebooks():
        return script
    if candidate.suffix in (".ipynb", ".py") and candidate.is_file():
        return candidate
    known = ", ".join(p.stem for p in project_notebooks())
    raise NotebookGridError(f"{name}: no such notebook (the project's notebooks: {known})")


def as_ipynb(source: Path, folder: Path) -> Path:
    """``source`` as an ``.ipynb`` papermill can read: itself, or a script converted into ``folder``."""
    if source.suffix == ".ipynb":
        return source
    import jupytext  # heavy

    path = folder / f"{source.stem}.ipynb"
    jupytext.write(jupytext.read(source), path, fmt="ipynb")
    return path


def declared_parameters(path: Path) -> dict[str, Any]:
    """The names and defaults of the notebook's ``parameters`` cell (papermill's own reader)."""
    import tempfile

    import papermill  # heavy

    with tempfile.TemporaryDirectory(prefix="nomad-notebook-") as folder:
        inspected = papermill.inspect_notebook(str(as_ipynb(Path(path), Path(folder))))
    return {name: spec["default"] for name, spec in inspected.items()}


def parse_value(text: str) -> Any:
    """A CLI parameter value: JSON when it parses (``0.05``, ``null``, ``["a"]``), else the string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def grid(pairs: Iterable[tuple[str, str]], declared: Mapping[str, Any], source: str) -> list[dict[str, Any]]:
    """The cartesian product of the values given per name; a repeated name is one axis of the grid.

    Names the notebook does not declare are refused: papermill would silently inject them.
    """
    axes: dict[str, list[Any]] = {}
    for name, text in pairs:
        if name not in declared:
            raise NotebookGridError(
                f"{source}: -p {name}: the notebook has no parameter {name!r} "
                f"(it declares: {', '.join(declared) or 'none'})"
            )
        axes.setdefault(name, []).append(parse_value(text))
    return [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]


@dataclass(frozen=True)
class NotebookCell:
    """One execution: which notebook, with which parameters (only those the grid sets)."""

    notebook: Path
    parameters: dict[str, Any]

    @property
    def name(self) -> str:
        return self.notebook.stem

    def key(self) -> str:
        """SHA-256 over the notebook source, the parameters and the content of every file they name."""
        digest = hashlib.sha256(self.notebook.read_bytes())
        digest.update(json.dumps(self.parameters, sort_keys=True, default=str).encode())
        for value in self.parameters.values():
            path = PROJECT_ROOT / value if isinstance(value, str) else None
            if path is not None and path.is_file():
                digest.update(path.read_bytes())
        return digest.hexdigest()[:16]


@dataclass(frozen=True)
class CellResult:
    """What one cell produced; ``skipped`` when an earlier run had already computed it."""

    cell_key: str
    notebook: str
    parameters: dict[str, Any]
    output_dir: str
    seconds: float
    outputs: list[str]
    git_sha: str | None = None
    skipped: bool = False


def cells_for(notebook: str, pairs: Sequence[tuple[str, str]]) -> list[NotebookCell]:
    """Every cell of ``notebook`` over the ``-p name value`` pairs."""
    path = notebook_path(notebook)
    declared = declared_parameters(path)
    return [NotebookCell(path, params) for params in grid(pairs, declared, source=str(path))]


def execute_notebook(
    notebook: Path,
    output: Path,
    parameters: dict[str, Any],
    *,
    cell_timeout: float | None = None,
    progress: bool = False,
) -> None:
    """papermill on the project's kernel, in the project folder (where notebooks resolve their paths);
    a script ``notebook`` is converted in a temporary folder first.

    ``cell_timeout`` bounds each notebook cell's wait for the kernel. Past it the notebook runs once
    more on a fresh kernel: a kernel whose reply was lost (seen once: the kernel idle, the client
    waiting) is a transport failure. A failing notebook is never retried; its error propagates.
    """
    import tempfile

    import papermill  # heavy
    from nbclient.exceptions import CellTimeoutError  # heavy

    with tempfile.TemporaryDirectory(prefix="nomad-notebook-") as folder:
        source = as_ipynb(Path(notebook), Path(folder))
        for attempt in (1, 2):
            try:
                papermill.execute_notebook(
                    str(source),
                    str(output),
                    parameters=parameters,
                    kernel_name="python3",
                    cwd=str(PROJECT_ROOT),
                    progress_bar=progress,
                    log_output=progress,
                    execution_timeout=cell_timeout,
                )
                return
            except CellTimeoutError:
                if attempt == 2 or cell_timeout is None:
                    raise


def run_cell(
    cell: NotebookCell,
    root: str | os.PathLike[str] = DEFAULT_GRID_ROOT,
    rerun: bool = False,
    progress: bool = False,
    cell_timeout: float | None = None,
) -> CellResult:
    """Execute one cell with papermill unless its ``cell.json`` already exists (or ``rerun``); its record.

    ``cell_timeout``: see :func:`execute_notebook`.

    ``progress`` shows papermill's bar over the notebook's cells and streams what the notebook prints
    (its own progress bars included) to stderr, so a long cell is never silent.

    Self-contained (no store, no shared state), so it runs unchanged in this process or on a Dask worker.
    """

    key = cell.key()
    out = Path(root) / cell.name / key
    record_path = out / "cell.json"
    if record_path.is_file() and not rerun:
        return CellResult(**{**json.loads(record_path.read_text()), "skipped": True})
    out.mkdir(parents=True, exist_ok=True)
    parameters = dict(cell.parameters)
    if "out_dir" in declared_parameters(cell.notebook) and "out_dir" not in parameters:
        parameters["out_dir"] = _portable(out)
    # cells running side by side on a cluster take turns on the workspace store instead of failing
    os.environ.setdefault(LOCK_WAIT_ENV, str(CELL_STORE_WAIT_S))
    started = time.perf_counter()
    execute_notebook(
        cell.notebook, out / f"{cell.name}.ipynb", parameters, cell_timeout=cell_timeout, progress=progress
    )
    _portable_notebook(out / f"{cell.name}.ipynb", cell.notebook)
    # the command that makes this one cell, whichever process (or Dask worker) ran it
    grid = [
        x
        for name, value in cell.parameters.items()
        for x in ("-p", name, value if isinstance(value, str) else json.dumps(value, default=str))
    ]
    write_provenance(out, provenance_record(params=parameters, argv=["nomad-lab", "sweep", cell.name, *grid]))
    result = CellResult(
        cell_key=key,
        notebook=cell.name,
        parameters=parameters,
        output_dir=_portable(out),
        seconds=round(time.perf_counter() - started, 3),
        outputs=sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()),
        git_sha=git_state()["gitSha"],
    )
    record = {k: v for k, v in result.__dict__.items() if k != "skipped"}
    tmp = record_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=2, default=str) + "\n")
    tmp.replace(record_path)  # last and atomic: the cell counts as computed only from here on
    return result


def _portable_notebook(path: Path, source: Path) -> None:
    """papermill stores the notebook's absolute input and output paths; a stored result names no
    machine path (:func:`nomad_lab.eval.provenance.portable`), and its input is the tracked ``source``
    (not the temporary notebook it was converted to)."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    meta = notebook.get("metadata", {}).get("papermill", {})
    if isinstance(meta.get("input_path"), str):
        meta["input_path"] = portable(str(source.resolve()))
    if isinstance(meta.get("output_path"), str):
        meta["output_path"] = portable(meta["output_path"])
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def run_cells(
    cells: Sequence[NotebookCell],
    root: str | os.PathLike[str] = DEFAULT_GRID_ROOT,
    *,
    client: Any | None = None,
    store_path: str | os.PathLike[str] | None = None,
    progress: bool = True,
    rerun: bool = False,
    cell_timeout: float | None = None,
) -> list[CellResult]:
    """Run every cell, here one after another or as tasks on a Dask ``client``; record each in the store.

    Only this process records cells in the store (one row per finished cell, as it finishes), opening
    it just for that: a notebook that reads or writes the store itself must find it free.
    """
    from tqdm import tqdm  # heavy

    if client is None:
        if progress:
            _stream_papermill_log()
        finished: Iterable[CellResult] = (
            run_cell(cell, root, rerun, progress, cell_timeout) for cell in cells
        )
    else:
        from distributed import as_completed  # heavy

        futures = [
            client.submit(run_cell, cell, root, rerun, False, cell_timeout, pure=False) for cell in cells
        ]
        finished = (future.result() for future in as_completed(futures))
    results = []
    for result in tqdm(finished, total=len(cells), desc="notebook cells", disable=not progress):
        # opened per finished cell, never across one: a running notebook may need the store itself
        with Store(store_path or DEFAULT_STORE_PATH) as store:
            # a skipped cell is recorded too if a kill landed between its cell.json and its row
            if not result.skipped or not store.has_notebook_cell(result.cell_key):
                store.put_notebook_cell(
                    result.cell_key,
                    result.notebook,
                    result.parameters,
                    result.output_dir,
                    result.seconds,
                    result.git_sha,
                )
        results.append(result)
    return results


def _portable(path: Path) -> str:
    """Relative to the project when inside it (the kernel's working directory), so records and executed
    notebooks read the same in any clone; absolute otherwise."""
    resolved = path.resolve()
    return str(resolved.relative_to(PROJECT_ROOT)) if resolved.is_relative_to(PROJECT_ROOT) else str(resolved)


def _stream_papermill_log() -> None:
    """papermill's ``log_output`` goes through its logger: send it to stderr, once, as plain lines."""
    import logging
    import sys

    logger = logging.getLogger("papermill")
    if not any(getattr(h, "_nomad_lab", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("  | %(message)s"))
        handler._nomad_lab = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
