"""``runners.studies.run_study``: the one door, and the Dask hook it builds for a study that asks for one."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.runners import studies as door
from nomad_lab.runners.cluster import endpoints_by_spec
from nomad_lab.studies.params import CLUSTER, ENDPOINT, STORE
from nomad_lab.studies.result import Result
from nomad_lab.studies.shape import Param, Params, Study


def _study(seen: list) -> Study:
    def run(params: Params, fill_missing: object = None) -> dict:
        seen.append(fill_missing)
        return {"rows": [{"judged": fill_missing is not None}]}

    return Study(
        name="grid",
        title="grid",
        run=run,
        rows=lambda result: result["rows"],
        result=lambda result: Result("grid", value=result),
        out_dir="results/grid",
        command=("study", "grid"),
        params=(
            Param("judge_model", str, ("a", "b"), "specs", many=True),
            Param("floor", float, 0.0, "floor"),
            Param("limit", int, None, "limit"),
            Param("sample", int, None, "sample"),
            Param("reask_confidence", bool, False, "re-ask old verdicts", flag=True),
            ENDPOINT,
            *CLUSTER,
            STORE,
        ),
        hooks=("fill_missing",),
    )


@pytest.fixture
def grid(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[list, list]:
    """The door over a fake study, with a fake Dask client and filler (what they were built from)."""
    seen: list = []
    clients: list = []

    @contextmanager
    def client(scheduler: str | None, workers: int):
        clients.append((scheduler, workers))
        yield None if not scheduler and not workers else f"client({scheduler or workers})"

    def filler(client: object, *, endpoints: dict) -> tuple:
        return (client, endpoints)

    monkeypatch.setattr(door, "get", lambda name: _study(seen))
    monkeypatch.setattr(door, "dask_client", client)
    monkeypatch.setattr(door, "verdict_filler", filler)
    monkeypatch.setenv("NOMAD_LAB_STORE", str(tmp_path / "s.duckdb"))
    return seen, clients


def test_the_verdict_filler_is_built_on_the_cluster_the_parameters_name(grid, tmp_path: Path) -> None:
    seen, clients = grid
    store = tmp_path / "s.duckdb"
    door.run_study("grid", workers=2, endpoint=["a=ollama://h:1/m"], store=store, out=tmp_path)
    assert clients == [(None, 2)]
    assert seen == [("client(2)", {"a": ["a", "ollama://h:1/m"]})]
    door.run_study("grid", store=store, out=tmp_path)  # no cluster: judged in-process
    door.run_study("grid", workers=2, sample=10, store=store, out=tmp_path)  # the grid judges a sample too
    assert seen[1:] == [None, ("client(2)", {})]


def test_workers_and_scheduler_together_or_a_stray_endpoint_are_one_error(grid, tmp_path: Path) -> None:
    with pytest.raises(NomadLabError, match="study grid: give --workers or --scheduler, not both"):
        door.run_study("grid", workers=2, scheduler="tcp://head:8786", out=tmp_path)
    with pytest.raises(NomadLabError, match="--endpoint c=x: expected SPEC=ENDPOINT where SPEC is one of"):
        endpoints_by_spec(["c=x"], ["a", "b"])
