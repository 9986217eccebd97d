"""One Study shape: every study module registers itself, and one door stores, prints and writes it."""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path

import pytest

import nomad_lab.studies.budgeting as budgeting
import nomad_lab.studies.gating as gating
from nomad_lab.cli import build_parser, main
from nomad_lab.core.errors import NomadLabError
from nomad_lab.publish.results import write
from nomad_lab.store import Store
from nomad_lab.studies import registry
from nomad_lab.studies.result import Page, Result
from nomad_lab.studies.shape import Param, Params, Study, execute, resolve_params, stored_params
from tests.support.dumps import dump_of, random_records
from tests.support.paths import FIXTURES

STUDIES = {
    "estimator",
    "placement",
    "transport",
    "kv-window",
    "floor-sweep",
    "gates",
    "judges",
    "injection",
    "growth",
    "gates-at-size",
    "ladder",
    "per-passage",
    "embedders",
    "rewrite",
    "answerability",
    "sufficiency",
    "reader-probe",
    "label-free",
    "labelling",
    "draft-rating",
    "note-effect",
}


def test_every_study_module_registers_one_study_named_like_it_in_main_job_order() -> None:
    found = registry.studies()
    assert set(found) == STUDIES
    for half in (gating, budgeting):
        for info in pkgutil.iter_modules(half.__path__):
            study = getattr(importlib.import_module(f"{half.__name__}.{info.name}"), "STUDY", None)
            if study is not None:  # module, registry name and command word are one word
                assert study.name.replace("-", "_") == info.name == study.module_name
                assert found[study.name] is study
    stages = [s.stage for s in found.values()]
    assert stages == sorted(stages)
    published = ["floor-sweep", "gates", "estimator", "placement", "judges", "growth"]
    assert [s.name for s in registry.published()] == published


def test_every_study_command_is_a_valid_command_line_and_names_its_outputs() -> None:
    parser = build_parser()
    for study in registry.studies().values():
        for command, out_dir in [
            (study.command, study.out_dir),
            *((o.command, o.out_dir) for o in study.also),
        ]:
            assert callable(parser.parse_args(list(command)).func), study.name
            assert out_dir.startswith("results/")
        if study.published:
            assert study.tables, f"{study.name}: a published study shows at least its table"


def test_study_help_lists_every_registered_study(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["study", "--help"])
    printed = capsys.readouterr().out
    assert all(name in printed for name in STUDIES)
    assert "(own command)" in printed  # the opt-in ones say so
    for argv in (["sweep", "--help"], *(["study", name, "--help"] for name in STUDIES)):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 0, argv
    assert "--refusal-tag TAG" in capsys.readouterr().out  # sweep --dump takes the floor study's options


def test_an_unknown_study_is_one_error_naming_the_known_ones() -> None:
    known = r"no such study \(known: answerability, draft-rating, embedders, estimator"
    with pytest.raises(NomadLabError, match=known):
        registry.get("nope")


def test_getting_one_study_imports_its_module_only_and_finds_what_the_walk_finds() -> None:
    """A notebook's kernel runs one study: ``get`` imports its module, no other study's (nor scipy's
    statistics, which no gate module imports before it needs them)."""
    import subprocess
    import sys

    probe = (
        "import sys; from nomad_lab.studies.registry import get; get('floor-sweep'); "
        "print(sorted(n for n, m in list(sys.modules.items()) if hasattr(m, 'STUDY'))); "
        "print('scipy.stats' in sys.modules)"
    )
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert shown.stdout.splitlines() == ["['nomad_lab.studies.gating.floor_sweep']", "False"]
    found = registry.studies()
    assert all(registry.get(name) is study for name, study in found.items())


def test_params_are_typed_and_an_unknown_or_bad_one_is_one_error_line() -> None:
    declared = (Param("books", int, (3, 6), "books", many=True), Param("floor", float, 0.5, "f", check=None))
    params = resolve_params(declared, {"floor": 0.1}, "study growth")
    assert params.books == (3, 6) and params.floor == 0.1 and "books" in params
    with pytest.raises(AttributeError, match="no parameter 'book'"):
        _ = params.book
    with pytest.raises(NomadLabError, match=r"study growth: unknown parameter\(s\) book"):
        resolve_params(declared, {"book": 3}, "study growth")
    with pytest.raises(NomadLabError, match=r"study growth: --floor \[0.5, 1.5\]: must be between 0 and 1"):
        execute(registry.get("growth"), {"floor": [0.5, 1.5]})
    with pytest.raises(NomadLabError, match=r"study judges: --alpha nan: must be a number between 0 and 1"):
        resolve_params(registry.get("judges").params, {"alpha": float("nan")}, "study judges")


def test_execute_stores_the_rows_under_the_study_name_and_publishes_its_value(tmp_path: Path) -> None:
    def page(result: dict) -> Result:
        return Result(
            "squares",
            value=result,
            pages=(Page("t.md", (f"{len(result['rows'])} rows, run {result['run_id']}",)),),
        )

    def run(params: Params) -> dict:
        return {"rows": [{"n": n, "sq": n * n} for n in range(params.up_to)]}

    study = Study(
        name="squares",
        title="squares",
        run=run,
        rows=lambda result: result["rows"],
        result=page,
        out_dir="results/squares",
        command=("study", "squares"),
        params=(Param("up_to", int, 2, "how many"), Param("store", Path, None, "store")),
    )
    store = tmp_path / "s.duckdb"
    value, paths = execute(study, {"up_to": 4, "store": store, "out": tmp_path / "out"}, publish=write)
    result = value.value
    with Store(store, read_only=True) as opened:
        assert opened.study_rows("squares") == [
            {"n": 0, "sq": 0},
            {"n": 1, "sq": 1},
            {"n": 2, "sq": 4},
            {"n": 3, "sq": 9},
        ]
        assert opened.study_rows("squares", result["run_id"])[3] == {"n": 3, "sq": 9}
    assert paths["t.md"].read_text() == f"4 rows, run {result['run_id']}\n"
    hook = lambda: None  # noqa: E731 - a callable (a Dask hook) is not stored, nor where the files went
    assert stored_params({"up_to": 4, "where": tmp_path, "hook": hook, "out": tmp_path}) == {
        "up_to": 4,
        "where": str(tmp_path),
    }
    again, nothing = execute(study, {"store": store, "out": tmp_path / "again"})  # up_to: its default
    assert again.value["rows"] == [{"n": 0, "sq": 0}, {"n": 1, "sq": 1}]
    assert nothing == {} and not (tmp_path / "again").exists()  # no publish writer given: nothing written


def _floor_sweep(tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, list]:
    store = tmp_path / f"{argv[0]}.duckdb"
    out = tmp_path / argv[0]
    assert main([*argv, "--out", str(out), "--alpha", "0.2", "--store", str(store)]) == 0
    with Store(store, read_only=True) as opened:
        rows = opened.study_rows("floor-sweep")
    return capsys.readouterr().out, rows


def test_the_gate_sweep_and_study_floor_run_the_same_registered_study(tmp_path: Path, capsys) -> None:
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(dump_of(random_records(5, 80))))
    printed, rows = _floor_sweep(tmp_path, ["sweep", "--dump", str(dump)], capsys)
    assert "| 0.62 |" in printed and "wrote floor_sweep.png:" in printed
    curves = json.loads((tmp_path / "sweep" / "floor_sweep.json").read_text())["curves"]
    assert len(rows) == sum(len(c) for c in curves.values()) == 101 + 101 + 61
    again, same = _floor_sweep(tmp_path, ["study", "floor-sweep", "--dump", str(dump)], capsys)
    assert same == rows and again.replace(str(tmp_path / "study"), "") == printed.replace(
        str(tmp_path / "sweep"), ""
    )


NEW_STUDY = '''"""How big is a corpus: documents, distractors and questions per suite."""

from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.golden_suites import load_suites
from nomad_lab.studies.params import CORPUS, GOLDENS, STORE, suite_param
from nomad_lab.studies.result import Page, Result
from nomad_lab.studies.shape import Params, Study


def compute(params: Params) -> list[dict]:
    corpus = load_corpus(params.corpus)
    goldens = load_suites(params.goldens, params.suite, corpus.all_doc_ids)
    return [
        {"suite": s, "documents": len(corpus.docs), "questions": sum(g.suite == s for g in goldens)}
        for s in sorted({g.suite for g in goldens})
    ]


def result(rows: list[dict]) -> Result:
    table = "\\n".join(f"| {r['suite']} | {r['documents']} | {r['questions']} |" for r in rows)
    return Result("corpus-stats", value=rows, pages=(Page("corpus_stats.md", (table,)),))


STUDY = Study(
    name="corpus-stats", title="Corpus size", run=compute, rows=lambda rows: rows, result=result,
    out_dir="results/corpus_stats", command=("study", "corpus-stats"), published=False,
    params=(CORPUS, GOLDENS, suite_param("*"), STORE),
)
'''
"""A whole study in one module (about 30 lines): ``tests/studies/test_registry.py`` drops it into a new
half and checks that the registry, the CLI and the store pick it up with nothing else changed."""


def test_a_new_study_is_one_module_the_registry_and_the_cli_pick_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    half = tmp_path / "example_half"
    half.mkdir()
    (half / "__init__.py").write_text("")
    (half / "corpus_stats.py").write_text(NEW_STUDY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "HALVES", (*registry.HALVES, "example_half"))
    assert registry.get("corpus-stats").module_name == "corpus_stats"
    assert registry.defaults("corpus-stats")["suite"] == "*"
    corpus, goldens = FIXTURES / "retrieval" / "corpus", FIXTURES / "retrieval" / "goldens"
    argv = ["study", "corpus-stats", "--corpus", str(corpus), "--goldens", str(goldens), "--suite", "core"]
    assert main([*argv, "--store", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "out")]) == 0
    with Store(tmp_path / "s.duckdb", read_only=True) as opened:
        (row,) = opened.study_rows("corpus-stats")
    assert row["suite"] == "core" and row["documents"] == len(list(corpus.glob("*.md")))
    assert (tmp_path / "out" / "corpus_stats.md").read_text() in capsys.readouterr().out
