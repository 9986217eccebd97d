"""Every notebook is a tracked jupytext script that JupyterLab saves unchanged, and really executes under
papermill."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jupytext
import pytest

from nomad_lab.runners.notebooks import NOTEBOOKS_DIR, as_ipynb, notebook_path, project_notebooks
from tests.support.paths import ROOT
from tests.support.retrieval import fixture_run

NOTEBOOKS = project_notebooks()
IPYKERNEL = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
"""What JupyterLab writes into a notebook once its kernel has started (the venv's ``python3`` kernel)."""


def test_the_scripts_are_the_notebooks_and_no_ipynb_is_tracked() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "notebooks"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert sorted(tracked) == sorted(
        ["notebooks/jupytext.toml", *(p.relative_to(ROOT).as_posix() for p in NOTEBOOKS)]
    )
    ignored = subprocess.run(["git", "check-ignore", "-q", "notebooks/label.ipynb"], cwd=ROOT)
    assert ignored.returncode == 0  # the twin JupyterLab saves beside the script is the user's
    assert {p.stem for p in NOTEBOOKS} >= {"explore", "floor_sweep", "label"}
    assert notebook_path("label") == notebook_path("label.ipynb") == NOTEBOOKS_DIR / "label.py"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_saving_a_run_notebook_leaves_its_script_as_it_was(notebook: Path, tmp_path: Path) -> None:
    """JupyterLab's save, through jupytext's contents manager with the project's config, after the
    kernel stamped its metadata and every cell has outputs: the script is byte for byte the same and the
    outputs land in the (ignored) .ipynb twin only."""
    from jupyter_server.services.contents.filemanager import FileContentsManager
    from jupytext.sync_contentsmanager import build_sync_jupytext_contents_manager_class

    shutil.copy(NOTEBOOKS_DIR / "jupytext.toml", tmp_path)
    shutil.copy(notebook, tmp_path)
    manager = build_sync_jupytext_contents_manager_class(FileContentsManager)(root_dir=str(tmp_path))
    opened = manager.get(notebook.name, type="notebook")["content"]
    assert opened.metadata["kernelspec"] == IPYKERNEL
    assert any("parameters" in c.metadata.get("tags", []) for c in opened.cells)
    opened.metadata["language_info"] = {"name": "python", "version": "3.11.2"}
    for cell in opened.cells:
        if cell.cell_type == "code":
            cell.outputs = [{"output_type": "stream", "name": "stdout", "text": "ran"}]
            cell.execution_count = 1
            cell.metadata["scrolled"] = True
    manager.save({"type": "notebook", "content": opened}, notebook.name)
    assert (tmp_path / notebook.name).read_bytes() == notebook.read_bytes()
    twin = json.loads((tmp_path / f"{notebook.stem}.ipynb").read_text())
    assert any(c.get("outputs") for c in twin["cells"])


CELL_TIMEOUT = 180
"""Seconds a test notebook's cell may take (each takes seconds; the slowest test notebooks, a minute on
a busy machine): past it, a kernel reply lost between kernel and client is retried on a fresh kernel
after three minutes, not ten."""


def execute(name: str, tmp_path: Path, **parameters: object) -> list[dict]:
    """Run the project notebook under papermill, each cell bounded (a lost kernel reply retries once)."""
    from nomad_lab.runners.notebooks import execute_notebook

    out = tmp_path / f"{name}.out.ipynb"
    execute_notebook(ROOT / "notebooks" / f"{name}.py", out, parameters, cell_timeout=CELL_TIMEOUT)
    return json.loads(out.read_text())["cells"]


def _stored_rows(path: Path, study: str) -> list[dict]:
    from nomad_lab.store import Store

    with Store(path, read_only=True) as store:
        return store.study_rows(study)


@pytest.mark.slow
def test_estimator_notebook(tmp_path: Path) -> None:
    store = str(tmp_path / "ws.duckdb")
    execute(
        "estimator",
        tmp_path,
        out_dir=str(tmp_path / "est"),
        tokenizer=["all-minilm-l6-v2 (WordPiece)"],
        store=store,
    )
    assert (tmp_path / "est" / "summary.json").exists()
    rows = _stored_rows(tmp_path / "ws.duckdb", "estimator")
    assert rows and {r["tokenizer"] for r in rows} == {"all-minilm-l6-v2 (WordPiece)"}


TINY_CORPUS = {
    "boil.md": "# Boiling water\n\nBoil clear water for one minute, then let it cool covered.\n",
    "bleach.md": "# Bleach\n\nAdd two drops of plain bleach per litre and wait thirty minutes.\n",
    "store.md": "# Storing water\n\nKeep sealed jugs somewhere cool and dark; rotate them yearly.\n",
}
"""Three one-line documents: every prefill the placement study times stays short (the notebook's
default corpus makes turns of hundreds of tokens, which changes nothing this test checks)."""


@pytest.mark.slow
def test_placement_notebook(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in TINY_CORPUS.items():
        (corpus / name).write_text(text)
    execute(
        "placement",
        tmp_path,
        out_dir=str(tmp_path / "pl"),
        corpus=str(corpus),
        turns=3,
        context_window=2048,
        recompute=True,
        rounds=1,
        store=str(tmp_path / "ws.duckdb"),
    )
    rows = json.loads((tmp_path / "pl" / "placement.json").read_text())["rows"]
    assert {r["placement"] for r in rows} == {"tail", "front"} and len(rows) == 12  # 4 series x 3 turns
    assert _stored_rows(tmp_path / "ws.duckdb", "placement") == rows


FIXTURES = ROOT / "tests" / "fixtures" / "retrieval"


@pytest.mark.slow
def test_judge_models_notebook_on_a_local_cluster(tmp_path: Path, embedder) -> None:
    # the run the judges read, retrieved here by the test's embedder: the kernel loads no embedder of its
    # own (the notebook's retrieve-now default runs in the embedders notebook's test)
    run_id = fixture_run(tmp_path / "ws.duckdb", embedder, suite="off_topic")
    cells = execute(
        "judge_models",
        tmp_path,
        judge_model=["embedded:gemma3-270m?n_ctx=2048"],
        suite="off_topic",
        run=run_id,
        limit=3,
        workers=1,  # the verdicts are computed on a real Dask LocalCluster (one batch: one worker process)
        out_dir=str(tmp_path / "judges"),  # never the repository's results/
        store=str(tmp_path / "ws.duckdb"),
        corpus=str(FIXTURES / "corpus"),
        goldens=str(FIXTURES / "goldens"),
    )
    outputs = json.dumps([c.get("outputs", []) for c in cells])
    assert "McNemar p" in outputs and "embedded:gemma3-270m" in outputs
    assert (tmp_path / "judges" / "judges.svg").exists()
    from nomad_lab.store import Store

    with Store(tmp_path / "ws.duckdb", read_only=True) as store:
        stored = store.con.execute("SELECT count(*), count(on_topic) FROM judge_verdicts").fetchone()
    assert stored[0] > 0 and stored[1] > 0  # landed in the store, and really judged (not failed open)


@pytest.mark.slow
def test_explore_notebook_over_a_stored_run(tmp_path: Path) -> None:
    from nomad_lab.eval.retrieval_service import RetrievalRequest, retrieve

    store = tmp_path / "ws.duckdb"
    run_id = retrieve(
        RetrievalRequest(
            corpus_dir=FIXTURES / "corpus",
            goldens_dir=FIXTURES / "goldens",
            suite="core,off_topic",
            floor=0.0,
            store_path=store,
            progress=False,
        )
    ).run_id
    corpus = str(FIXTURES / "corpus")  # run = "main" over this library: the run just stored
    cells = execute("explore", tmp_path, store=str(store), corpus=corpus, judge_model=None, floor=0.3)
    outputs = json.dumps([c.get("outputs", []) for c in cells if c["cell_type"] == "code"])
    assert f"run {run_id} (stored" in outputs and "application/vnd.jupyter.widget-view+json" in outputs


def test_explore_runs_where_it_lives_and_says_what_to_run_on_an_empty_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JupyterLab starts the kernel in notebooks/: with default parameters the notebook finds the
    workspace store (here an empty one named by NOMAD_LAB_STORE) and shows one line, no traceback."""
    import papermill

    from nomad_lab.eval.stored_runs import MAIN_RUN_COMMAND
    from nomad_lab.store import Store

    empty = tmp_path / "empty.duckdb"
    Store(empty).close()
    monkeypatch.setenv("NOMAD_LAB_STORE", str(empty))
    out = tmp_path / "explore.out.ipynb"
    papermill.execute_notebook(
        str(as_ipynb(ROOT / "notebooks" / "explore.py", tmp_path)),
        str(out),
        kernel_name="python3",
        cwd=str(ROOT / "notebooks"),
        progress_bar=False,
    )
    outputs = [o for c in json.loads(out.read_text())["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    shown = ["".join(o["data"]["text/markdown"]) for o in outputs if "text/markdown" in o.get("data", {})]
    assert len(shown) == 1 and shown[0].count("\n") == 0
    assert str(empty) in shown[0] and MAIN_RUN_COMMAND in shown[0]


PATH_PARAMETERS = ("store", "corpus", "goldens", "datasets", "dump", "out_dir", "model")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_path_parameter_is_read_from_the_workspace(notebook: Path) -> None:
    """JupyterLab runs a kernel in notebooks/: a path parameter reaches the library through
    ``in_workspace`` (``store_path`` for a store, or ``explorer``, which resolves its store itself), never
    as the raw string; and
    papermill can read every parameter (a comment with ``=`` in it hides the line from papermill)."""
    from nomad_lab.runners.notebooks import declared_parameters

    declared = declared_parameters(notebook)
    script = jupytext.read(notebook.with_suffix(".py"))
    parameters_cell = next(c for c in script.cells if "parameters" in c.metadata.get("tags", []))
    assigned = {line.split("=")[0].strip() for line in parameters_cell.source.splitlines() if "=" in line}
    assert set(declared) == assigned
    code = "\n".join(c.source for c in script.cells if c.cell_type == "code" and c is not parameters_cell)
    for name in set(declared) & set(PATH_PARAMETERS):
        resolved = (f"in_workspace({name})", f"store_path({name})", "explorer(")
        assert any(r in code for r in resolved), f"{notebook.stem}: {name}"


def test_a_cell_past_its_timeout_runs_the_notebook_once_more_on_a_fresh_kernel(tmp_path: Path) -> None:
    """The first execution stalls (as a lost kernel reply does), the second finishes: one retry."""
    import nbformat

    from nomad_lab.runners.notebooks import execute_notebook

    marker = tmp_path / "first-attempt"
    stall = (
        "import pathlib, time\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "if not marker.exists():\n"
        "    marker.write_text('stalled')\n"
        "    time.sleep(600)\n"
        "print('attempt done')\n"
    )
    notebook = tmp_path / "stall.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(stall)]), notebook)
    out = tmp_path / "stall.out.ipynb"
    execute_notebook(notebook, out, {}, cell_timeout=5)  # the stall is 600 s; the retry takes well under 1
    assert marker.read_text() == "stalled"  # the first attempt ran and stalled
    outputs = json.loads(out.read_text())["cells"][-1]["outputs"]
    assert any("attempt done" in "".join(o.get("text", "")) for o in outputs)


def test_a_cell_records_the_command_that_makes_it_beside_its_files(tmp_path: Path) -> None:
    import nbformat

    from nomad_lab.eval.provenance import git_state
    from nomad_lab.runners.notebooks import NotebookCell, run_cell

    parameters = nbformat.v4.new_code_cell("alpha = 0.1\nlabel = 'x'")
    parameters.metadata["tags"] = ["parameters"]
    notebook = tmp_path / "tiny.ipynb"
    tiny = nbformat.v4.new_notebook(cells=[parameters, nbformat.v4.new_code_cell("print(alpha)")])
    tiny.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(tiny, notebook)
    result = run_cell(NotebookCell(notebook, {"alpha": 0.05, "label": "core"}), root=tmp_path / "cells")
    record = json.loads((tmp_path / "cells" / "tiny" / result.cell_key / "provenance.json").read_text())
    assert record["argv"] == ["nomad-lab", "sweep", "tiny", "-p", "alpha", "0.05", "-p", "label", "core"]
    assert record["commit"] == git_state()["gitSha"] == result.git_sha and "provenance.json" in result.outputs
