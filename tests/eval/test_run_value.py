"""The RUN and GATE_SPEC parameter types: parsed and checked at the edge, resolved once by the service.

A bad gate spec or a run the store lacks must be refused before any work: no retrieval, no store file,
no model loaded. The retrieval a RUN value asks for goes through the one request the service builds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.core.errors import NomadLabError
from nomad_lab.eval.gating.gate_spec_type import GATE_SPEC
from nomad_lab.eval.gating.runs import MAIN, RETRIEVE_NOW, NoSuchRun, RunChoice, parse_run, resolve_run
from nomad_lab.eval.stored_runs import MAIN_RUN_COMMAND
from nomad_lab.store import Store
from nomad_lab.studies.gating.run_param import RUN
from nomad_lab.studies.params import STORE
from nomad_lab.studies.shape import resolve_params
from tests.support.paths import CORPUS, GOLDENS, ROOT
from tests.support.retrieval import fixture_run


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, RETRIEVE_NOW),
        ("retrieve", RETRIEVE_NOW),
        ("latest", RunChoice(latest=True)),
        ("main", MAIN),
        ("retrieve:core,off_topic", RunChoice(suites="core,off_topic")),
        ("20261205T125635Z-22935183", RunChoice(run_id="20261205T125635Z-22935183")),
    ],
)
def test_run_values_parse_and_print_back(text: str | None, expected: RunChoice) -> None:
    choice = parse_run(text)
    assert choice == expected
    assert parse_run(str(choice)) == choice  # the text results record reads back as the same value


@pytest.mark.parametrize("text", ["retrieve:", "two words", "-x"])
def test_a_malformed_run_is_one_line_listing_the_forms(text: str) -> None:
    with pytest.raises(NomadLabError) as caught:
        parse_run(text)
    assert "latest" in str(caught.value) and "\n" not in str(caught.value)


def test_a_study_receives_the_run_typed(tmp_path: Path) -> None:
    params = resolve_params((RUN, STORE), {"run": "latest", "store": tmp_path / "none.duckdb"}, "study x")
    assert params.run.latest and str(params.run) == "latest"
    assert params.run.pinned is None and "no store yet" in params.run.missing  # pinned at the edge
    with pytest.raises(NomadLabError, match="study x: --run"):
        resolve_params((RUN,), {"run": "retrieve:"}, "study x")


@pytest.mark.parametrize(
    "spec",
    ["ce:nonexistent-model", "ce:/no/such/model.onnx", "learned:/no/such/gate.json", "rerank:nanorank"],
)
def test_gate_spec_type_refuses_what_no_loader_can_open(spec: str) -> None:
    with pytest.raises(NomadLabError) as caught:
        GATE_SPEC(spec)
    assert spec.split(":", 1)[1].split("/")[-1] in str(caught.value)


def test_gate_spec_type_keeps_the_canonical_spec() -> None:
    assert str(GATE_SPEC("floor@0.50+ce:ms-marco-minilm-l12")) == "floor@0.5+ce:ms-marco-minilm-l12"
    assert str(GATE_SPEC("judge:any-cache-key@0.5")) == "judge:any-cache-key@0.5"  # verdicts need no model


def test_study_gates_refuses_a_bad_model_before_any_work(tmp_path: Path) -> None:
    """The new user's case: a spec naming no model is refused at the edge, before retrieval, in a
    fresh process (so the refusal includes the CLI's own start-up, not a warmed import cache)."""
    store = tmp_path / "store.duckdb"
    argv = ["study", "gates", "--store", str(store), "--out", str(tmp_path / "out")]
    done = subprocess.run(
        [sys.executable, "-m", "nomad_lab", *argv, "--gate", "ce:nonexistent-model"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 1
    assert "nonexistent-model" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not store.exists() and not (tmp_path / "out").exists()  # nothing retrieved, nothing written


def test_a_run_the_store_lacks_is_refused_before_retrieval(tmp_path: Path, capsys) -> None:
    store = tmp_path / "store.duckdb"
    Store(store).close()
    argv = ["study", "per-passage", "--judge-model", "embedded:gemma3-270m", "--store", str(store)]
    assert main([*argv, "--run", "no-such-run", "--out", str(tmp_path / "out")]) == 1
    error = capsys.readouterr().err.strip()
    assert "no run 'no-such-run'" in error and "\n" not in error


def test_resolve_run_retrieves_once_then_names_it(tmp_path: Path, embedder) -> None:
    store = tmp_path / "store.duckdb"
    stored = fixture_run(store, embedder, suite="core")
    assert resolve_run(store, stored) == stored
    assert resolve_run(store, "latest") == stored
    new = resolve_run(store, "retrieve:off_topic", corpus=CORPUS, goldens=GOLDENS, suite="core")
    assert new != stored
    with Store(store, read_only=True) as opened:
        assert opened.get_run(new).suite == "off_topic"  # retrieve:SUITES replaced the study's suite
    assert resolve_run(store, "latest") == new
    with pytest.raises(NomadLabError, match="needs corpus"):
        resolve_run(store, "retrieve")


def test_main_names_the_main_jobs_run_over_the_corpus_never_the_latest(several_runs: dict) -> None:
    """``main`` is the newest core,off_topic run with distractors over the corpus, found by fingerprint:
    neither the run stored last (core over a grown library) nor a core or distractor-less run."""
    store, runs = several_runs["store"], several_runs["runs"]
    assert not MAIN.retrieves and str(MAIN) == "main"
    assert (
        resolve_run(store, "main", corpus=CORPUS) == resolve_run(store, MAIN, corpus=CORPUS) == runs["main"]
    )
    assert resolve_run(store, "latest") == runs["grown"]
    assert resolve_run(store, runs["core"], corpus=CORPUS) == runs["core"]  # an id is taken as given
    with pytest.raises(NoSuchRun, match=r"no run 'r-none' stored.*nomad-lab store runs"):
        resolve_run(store, "r-none", corpus=CORPUS)


def test_main_over_a_library_without_one_is_one_line_naming_the_command(
    several_runs: dict, tmp_path: Path, capsys
) -> None:
    """The grown library holds a later core run, not a main one: the study is refused in one line that
    names the command storing one over that library, before any model loads or anything is written."""
    grown, store = several_runs["grown"], several_runs["store"]
    with pytest.raises(NoSuchRun) as caught:
        resolve_run(store, "main", corpus=grown)
    message = str(caught.value)
    assert "\n" not in message and f"no core,off_topic run over {grown} stored yet" in message
    assert f"; run `{MAIN_RUN_COMMAND} --corpus {grown}` first" in message
    out = tmp_path / "out"
    argv = ["study", "answerability", "--store", str(store), "--corpus", str(grown), "--out", str(out)]
    assert main([*argv, "--run", "main"]) == 1
    error = capsys.readouterr().err.strip()
    assert error.endswith(message) and "\n" not in error and not out.exists()
    with pytest.raises(NoSuchRun, match=f"no store yet, so no run main; run `{MAIN_RUN_COMMAND}` first"):
        resolve_run(tmp_path / "none.duckdb", "main")
