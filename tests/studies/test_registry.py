"""One Study shape: every study module registers itself, and one runner stores, prints and writes it."""

from __future__ import annotations

import json
import pkgutil
from pathlib import Path

import pytest

import nomad_lab.studies.budgeting as budgeting
import nomad_lab.studies.gating as gating
from nomad_lab.cli import build_parser, main
from nomad_lab.core.errors import NomadLabError
from nomad_lab.store import Store
from nomad_lab.studies import registry
from nomad_lab.studies.shape import Study, execute, stored_params
from tests.support.dumps import dump_of, random_records

STUDY_MODULES = {"estimator", "prefill", "transport", "floor", "judges", "injection", "growth"}


def test_every_study_module_registers_one_study_in_main_job_order() -> None:
    modules = {m.name for pkg in (gating, budgeting) for m in pkgutil.iter_modules(pkg.__path__)}
    assert modules >= STUDY_MODULES
    found = registry.studies()
    assert set(found) == {
        "estimator",
        "placement",
        "transport",
        "floor",
        "gates",
        "judges",
        "injection",
        "growth",
    }
    stages = [s.stage for s in found.values()]
    assert stages == sorted(stages)
    assert [s.name for s in registry.published()] == [
        "floor",
        "gates",
        "estimator",
        "placement",
        "judges",
        "growth",
    ]


def test_every_study_command_is_a_valid_command_line_and_names_its_outputs() -> None:
    parser = build_parser()
    for study in registry.studies().values():
        assert callable(parser.parse_args(list(study.command)).func), study.name
        assert study.out_dir.startswith("results/")
        if study.published:
            assert study.tables, f"{study.name}: a published study shows at least its table"


def test_an_unknown_study_is_one_error_naming_the_known_ones() -> None:
    with pytest.raises(NomadLabError, match=r"'nope': no such study \(known: estimator, floor"):
        registry.get("nope")


def test_execute_stores_the_rows_under_the_study_name_and_writes_its_files(tmp_path: Path) -> None:
    written: list[Path] = []

    def write(result: dict, out: Path) -> dict[str, Path]:
        out.mkdir(parents=True, exist_ok=True)
        (out / "t.md").write_text(f"{len(result['rows'])} rows, run {result['run_id']}")
        written.append(out / "t.md")
        return {"md": out / "t.md"}

    study = Study(
        name="squares",
        title="squares",
        run=lambda p: {"rows": [{"n": n, "sq": n * n} for n in range(p["up_to"])]},
        rows=lambda result: result["rows"],
        markdown=lambda result: str(result["rows"]),
        write=write,
        out_dir="results/squares",
        command=("study", "squares"),
    )
    store = tmp_path / "s.duckdb"
    hook = lambda: None  # noqa: E731 - a callable parameter (a Dask hook) is not stored
    result, paths = execute(study, {"up_to": 4, "where": tmp_path, "hook": hook}, tmp_path / "out", store)
    with Store(store, read_only=True) as opened:
        assert opened.study_rows("squares") == [
            {"n": 0, "sq": 0},
            {"n": 1, "sq": 1},
            {"n": 2, "sq": 4},
            {"n": 3, "sq": 9},
        ]
        assert opened.study_rows("squares", result["run_id"])[3] == {"n": 3, "sq": 9}
    assert paths["md"].read_text() == f"4 rows, run {result['run_id']}"
    assert stored_params({"up_to": 4, "where": tmp_path, "hook": hook}) == {
        "up_to": 4,
        "where": str(tmp_path),
    }
    _, nothing = execute(study, {"up_to": 1}, None, store)
    assert nothing == {} and len(written) == 1


def test_the_gate_sweep_runs_through_the_registered_floor_study(tmp_path: Path, capsys) -> None:
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(dump_of(random_records(5, 80))))
    store = tmp_path / "s.duckdb"
    argv = [
        "sweep",
        "--dump",
        str(dump),
        "--out",
        str(tmp_path / "o"),
        "--alpha",
        "0.2",
        "--store",
        str(store),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "| 0.62 |" in printed and "wrote sweep_png:" in printed
    with Store(store, read_only=True) as opened:
        rows = opened.study_rows("floor")
    curves = json.loads((tmp_path / "o" / "floor_sweep.json").read_text())["curves"]
    assert len(rows) == sum(len(c) for c in curves.values()) == 101 + 101 + 61
