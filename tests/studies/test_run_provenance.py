"""A gating study given ``--run main`` or ``--run latest`` records the run that value meant: its id and
corpus fingerprint, read where the gating service finds the run (the RUN parameter's ``names_runs``), so
the shared study shape stays free of the gating half."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nomad_lab.eval.gating.runs import NoSuchRun, parse_run, pin_run, resolve_run
from nomad_lab.publish.results import write
from nomad_lab.store import RunRecord, Store
from nomad_lab.studies.gating.run_param import RUN, study_run
from nomad_lab.studies.params import CORPUS, STORE
from nomad_lab.studies.result import Page, Result
from nomad_lab.studies.shape import Param, Study, execute
from tests.support.paths import CORPUS as FIXTURE_CORPUS
from tests.support.retrieval import fixture_run


def probe(run_param: Param) -> Study:
    """A gating study that resolves its ``--run`` and publishes one page naming it."""
    return Study(
        name="probe",
        title="probe",
        run=lambda p: {"rows": [{"run": study_run(p)}]},
        rows=lambda result: result["rows"],
        result=lambda result: Result("probe", pages=(Page("t.md", (result["rows"][0]["run"],)),)),
        out_dir="results/probe",
        command=("study", "probe"),
        params=(run_param, CORPUS, STORE),
    )


def test_main_and_latest_record_the_run_they_meant(tmp_path: Path, embedder) -> None:
    store = tmp_path / "s.duckdb"
    main = fixture_run(store, embedder)  # the main run over the fixture corpus
    with Store(store) as opened:
        main_print = opened.get_run(main).fingerprint
        opened.put_run(RunRecord(kind="retrieval", fingerprint="ef" * 8, params={}, run_id="later"), [], {})

    def record(value: str, study: Study | None = None) -> dict:
        out = tmp_path / f"{value}-{len(list(tmp_path.iterdir()))}"
        _, paths = execute(
            study or probe(RUN),
            {"run": value, "corpus": FIXTURE_CORPUS, "store": store, "out": out},
            publish=write,
        )
        assert (out / "t.md").read_text().strip() in (main, "later")  # the study read a stored run
        return json.loads(paths["provenance"].read_text())

    by_main = record("main")
    assert by_main["fingerprints"] == [main_print] and by_main["namedRuns"] == {main: main_print}
    by_latest = record("latest")
    assert by_latest["fingerprints"] == ["ef" * 8] and by_latest["namedRuns"] == {"later": "ef" * 8}
    assert record(main)["namedRuns"] == {main: main_print}  # an id as given, with its fingerprint
    plain = Param("run", RUN.type, None, RUN.help)  # the same value, no names_runs: nothing to record by
    assert record("main", probe(plain))["fingerprints"] == []


def test_latest_is_resolved_once_so_a_run_stored_midway_is_not_the_one_recorded(
    tmp_path: Path, embedder
) -> None:
    """``study gates --run latest`` stores its bank run midway; ``latest`` resolved again at the end
    would name that run. Pinned where the parameters are resolved, the run the study read is the run
    its provenance names."""
    store = tmp_path / "s.duckdb"
    first = fixture_run(store, embedder)
    with Store(store) as opened:
        first_print = opened.get_run(first).fingerprint

    def reads_then_stores(p) -> dict:
        read = study_run(p)
        with Store(p.store) as opened:  # as the gates study stores its bank run
            opened.put_run(
                RunRecord(kind="retrieval", fingerprint="ab" * 8, params={}, run_id="midway"), [], {}
            )
        return {"rows": [{"run": read}]}

    study = probe(RUN)
    study = Study(**{**study.__dict__, "run": reads_then_stores})
    out = tmp_path / "out"
    given = {"run": "latest", "corpus": FIXTURE_CORPUS, "store": store, "out": out}
    _, paths = execute(study, given, publish=write)
    record = json.loads(paths["provenance"].read_text())
    assert (out / "t.md").read_text().strip() == first  # the study read the run latest named when it started
    assert record["namedRuns"] == {first: first_print}  # and its provenance names that run, not "midway"
    assert "ab" * 8 in record["fingerprints"]  # the run it stored is still found by time


def test_a_pinned_run_value_keeps_its_text_and_reads_its_run(tmp_path: Path, embedder) -> None:
    store = tmp_path / "s.duckdb"
    first = fixture_run(store, embedder)
    choice = pin_run(store, "latest")
    assert str(choice) == "latest" and choice.pinned == first  # results still record what was typed
    with Store(store) as opened:
        opened.put_run(RunRecord(kind="retrieval", fingerprint="ab" * 8, params={}, run_id="midway"), [], {})
    assert resolve_run(store, choice) == first and resolve_run(store, "latest") == "midway"
    assert pin_run(store, [first, "retrieve"]) == [parse_run(first), parse_run("retrieve")]
    empty = pin_run(tmp_path / "none.duckdb", "latest")  # no store yet: refused only if it is read
    assert empty.pinned is None and empty.missing
    with pytest.raises(NoSuchRun, match="no store yet"):
        resolve_run(tmp_path / "none.duckdb", empty)
