"""Notebook grids and the judge-model grid, here and on a real Dask LocalCluster, results in the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nomad_lab.runners.notebooks import NotebookGridError, cells_for, grid, notebook_path, parse_value
from tests.support.fake_ollama import FakeServer, ollama_reply
from tests.support.retrieval import fixture_run


def test_grid_is_the_product_of_repeated_names() -> None:
    declared = {"alpha": 0.1, "dump": "x", "tags": None}
    pairs = [("alpha", "0.05"), ("dump", "a.json"), ("alpha", "0.2"), ("tags", '["x", "y"]')]
    assert grid(pairs, declared, "nb") == [
        {"alpha": 0.05, "dump": "a.json", "tags": ["x", "y"]},
        {"alpha": 0.2, "dump": "a.json", "tags": ["x", "y"]},
    ]
    assert grid([], declared, "nb") == [{}]  # no parameters: one cell on the defaults
    assert parse_value("null") is None and parse_value("embedded:gemma3-270m") == "embedded:gemma3-270m"


def test_unknown_notebook_or_parameter_is_named() -> None:
    with pytest.raises(NotebookGridError, match=r"no-such-notebook: no such notebook.*floor_sweep"):
        notebook_path("no-such-notebook")
    with pytest.raises(NotebookGridError, match=r"-p alhpa: the notebook has no parameter 'alhpa'.*alpha"):
        cells_for("floor_sweep", [("alhpa", "0.1")])


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory, embedder) -> tuple[Path, str, Path]:
    """A real retrieval run over the fixture corpus: the store, the run id and its dump."""
    root = tmp_path_factory.mktemp("scale")
    store, dump = root / "ws.duckdb", root / "dump.json"
    return store, fixture_run(store, embedder, dump_path=dump), dump


def _notebook_rows(store: Path) -> list[tuple]:
    from nomad_lab.store import Store

    with Store(store, read_only=True) as s:
        return s.con.execute("SELECT notebook, parameters FROM notebook_cells ORDER BY created_at").fetchall()


def _floor_sweep_grid(dump: Path, cells_dir: Path, store: Path) -> list[str]:
    """``nomad-lab sweep floor_sweep`` over the fixture run's dump, cells and records kept in tmp."""
    return [
        "sweep",
        "floor_sweep",
        "-p",
        "dump",
        str(dump),
        "--cells-dir",
        str(cells_dir),
        "--store",
        str(store),
        "--cell-timeout",
        "600",
    ]


@pytest.mark.slow
def test_notebook_grid_runs_each_cell_once_here_and_on_a_local_cluster(stored_run, tmp_path: Path) -> None:
    from nomad_lab.cli import main

    store, _, dump = stored_run
    cells_dir = tmp_path / "cells"
    base = _floor_sweep_grid(dump, cells_dir, store)
    grid_args = [*base, "-p", "alpha", "0.05", "-p", "alpha", "0.2"]
    assert main(grid_args) == 0
    cells = sorted((cells_dir / "floor_sweep").iterdir())
    assert len(cells) == 2
    for cell in cells:
        record = json.loads((cell / "cell.json").read_text())
        assert {"floor_sweep.ipynb", "floor_sweep.png", "floor_sweep.svg", "leak_vs_recall.svg"} <= set(
            record["outputs"]
        )
        assert record["parameters"]["out_dir"] == str(cell)  # the cell's files land in its own folder
    executed = {c: (c / "floor_sweep.ipynb").stat().st_mtime_ns for c in cells}
    calibrated = {json.loads((c / "floor_sweep.json").read_text())["calibrated"]["alpha"] for c in cells}
    assert calibrated == {0.05, 0.2}

    assert main(grid_args) == 0  # a rerun computes nothing
    assert {c: (c / "floor_sweep.ipynb").stat().st_mtime_ns for c in cells} == executed
    assert len(_notebook_rows(store)) == 2

    # one more value on a real Dask LocalCluster (one worker process: one cell is left to run): only the
    # new cell runs, and it lands in the store
    assert main([*grid_args, "-p", "alpha", "0.5", "--workers", "1"]) == 0
    assert len(list((cells_dir / "floor_sweep").iterdir())) == 3
    assert {c: (c / "floor_sweep.ipynb").stat().st_mtime_ns for c in cells} == executed
    rows = _notebook_rows(store)
    assert len(rows) == 3 and json.loads(rows[-1][1])["alpha"] == 0.5


@pytest.mark.slow
def test_a_notebook_that_opens_the_store_runs_in_a_grid_recorded_in_that_store(
    stored_run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The grid must not hold the store while a cell runs: the notebook's kernel opens it too."""
    from nomad_lab.cli import main

    monkeypatch.setenv("NOMAD_LAB_STORE_WAIT", "5")  # a held lock fails in seconds instead of waiting
    store = stored_run[0]
    before = len(_notebook_rows(store))
    args = [
        "sweep",
        "explore",
        "-p",
        "store",
        str(store),
        "--cells-dir",
        str(tmp_path),
        "--store",
        str(store),
        "--cell-timeout",
        "600",
    ]
    assert main(args) == 0
    assert len(_notebook_rows(store)) == before + 1


@pytest.mark.slow
def test_judge_grid_spreads_endpoints_over_dask_workers_and_fails_open(stored_run) -> None:
    """Two servers of one judge model, each on its own worker; one answers HTTP 500 to everything."""
    from nomad_lab.eval.gating.inputs.verdicts import run_verdicts
    from nomad_lab.runners.cluster import dask_client, fill_verdicts
    from nomad_lab.store import Store
    from nomad_lab.studies.gating.judges import compare_with_floor, judge_run

    store_path, run_id, _ = stored_run
    with (
        FakeServer(ollama_reply('{"on_topic": false}')) as good,
        FakeServer(lambda path: (500, "text/plain", "boom")) as bad,
    ):
        spec = f"ollama://127.0.0.1:{good.port}/judge"
        endpoints = {spec: [spec, f"ollama://127.0.0.1:{bad.port}/judge"]}
        handed: list = []
        counts: dict = {}

        def grid(store: Store, todo: dict) -> None:
            handed.append({s: list(items) for s, items in todo.items()})
            counts.update(
                fill_verdicts(client, store, todo, endpoints=endpoints, batch_size=1, progress=False)
            )

        with dask_client(workers=2) as client, Store(store_path) as store:
            run_verdicts(store, run_id, [spec], filler=grid)
            todo = handed[0][spec]
            assert counts == {spec: len(todo)} and len(todo) >= 4
            calls = store.model_calls(purpose="judge")  # logged by the client: workers have no store
            assert len(calls) == len(todo) and all(c.request_sha256 for c in calls)
            assert good.chat_requests() and bad.chat_requests()  # both endpoints served the grid
            assert len(good.chat_requests()) + len(bad.chat_requests()) >= len(todo)
            verdicts = [store.get_verdict(spec, item.key) for item in todo]
            assert all(v is not None for v in verdicts)
            failed = [v for v in verdicts if not v.ok]
            assert failed and all(v.on_topic is None for v in failed)  # HTTP 500: failed open, counted
            assert sorted(c.failure or "" for c in calls if not c.ok) == sorted(v.reason for v in failed)
            assert any(v.ok and v.on_topic is False for v in verdicts)

            asked = len(good.requests) + len(bad.requests)
            run_verdicts(store, run_id, [spec], filler=grid)
            assert len(handed) == 1 and len(good.requests) + len(bad.requests) == asked  # resumable

            judged = judge_run(store, run_id, spec, floor=0.0, progress=False)  # all from the cache
            assert len(good.requests) + len(bad.requests) == asked
            assert judged.failures == len(failed)
            row = compare_with_floor(judged)
            assert row.leak_judge[0] <= row.leak_floor[0]


@pytest.mark.slow
def test_a_grid_killed_midway_resumes_with_no_finished_cell_lost(stored_run, tmp_path: Path) -> None:
    """SIGKILL the real CLI once the first of three cells is done; the rerun keeps it and runs only the
    rest (the one the kill interrupted and the one never started)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from nomad_lab.cli import main

    store, _, dump = stored_run
    cells_dir = tmp_path / "cells"
    argv = _floor_sweep_grid(dump, cells_dir, store)
    argv += ["-p", "alpha", "0.01", "-p", "alpha", "0.02", "-p", "alpha", "0.03"]
    proc = subprocess.Popen([sys.executable, "-m", "nomad_lab.cli", *argv], stdout=subprocess.DEVNULL)
    try:
        while not list(cells_dir.glob("floor_sweep/*/cell.json")) and proc.poll() is None:
            time.sleep(0.05)  # no deadline: a slow machine only takes longer
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
    done = {
        p.parent: p.parent.joinpath("floor_sweep.ipynb").stat().st_mtime_ns
        for p in cells_dir.glob("*/*/cell.json")
    }
    assert 1 <= len(done) < 3  # killed midway
    assert main(argv) == 0
    assert len(list(cells_dir.glob("floor_sweep/*/cell.json"))) == 3
    assert {d: d.joinpath("floor_sweep.ipynb").stat().st_mtime_ns for d in done} == done  # not recomputed
    alphas = {
        json.loads(params).get("alpha") for name, params in _notebook_rows(store) if name == "floor_sweep"
    }
    assert {0.01, 0.02, 0.03} <= alphas  # every cell recorded, the DuckDB file intact


@pytest.mark.slow
def test_a_cell_whose_kernel_stops_answering_reruns_once_on_a_fresh_kernel(tmp_path: Path) -> None:
    import nbformat

    from nomad_lab.runners.notebooks import NotebookCell, run_cell

    marker = tmp_path / "first-attempt"
    source = (
        "import pathlib, time\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "if not marker.exists():\n"
        "    marker.touch()\n"
        "    time.sleep(60)  # the first kernel never answers in time"
    )
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]})]
    notebook.cells.append(nbformat.v4.new_code_cell(source))
    path = tmp_path / "stall.ipynb"
    nbformat.write(notebook, path)
    result = run_cell(NotebookCell(path, {"x": 2}), tmp_path / "cells", cell_timeout=5)
    assert marker.exists() and not result.skipped
    assert (tmp_path / "cells" / "stall" / result.cell_key / "cell.json").exists()


@pytest.mark.slow
def test_the_grid_recomputes_what_the_cached_judge_would_ask_again(stored_run) -> None:
    """What the one judge home hands a filler is ``CachedJudge``'s reuse rule: failed verdicts with
    ``retry_failed``, verdicts stored before the confidence read with ``reask_confidence``, nothing else."""
    from nomad_lab.eval.gating.inputs.verdicts import missing_inputs, run_sets
    from nomad_lab.store import Store, Verdict

    store_path, run_id, _ = stored_run
    spec = "test:reuse-rule"
    with Store(store_path) as store:
        inputs = [item for item in run_sets(store, run_id, floor=0.0).inputs() if item is not None]

        def missing(**rule: bool) -> set[str]:
            return {i.key for i in missing_inputs(store, spec, inputs, **rule)}

        todo = missing_inputs(store, spec, inputs)
        assert len(todo) >= 4
        failed, legacy, fresh = (item.key for item in todo[:3])
        store.put_verdict(spec, failed, Verdict(None, False, "timeout", confidence_reason="no-logprobs"))
        store.put_verdict(spec, legacy, Verdict(True, True))  # stored before confidence existed
        store.put_verdict(spec, fresh, Verdict(False, True, p_true=0.2))
        rest = {item.key for item in todo[3:]}
        assert missing() == rest
        assert missing(retry_failed=True) == rest | {failed}
        assert missing(reask_confidence=True) == rest | {legacy}
        assert missing(retry_failed=True, reask_confidence=True) == rest | {failed, legacy}
