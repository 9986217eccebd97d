"""Which runs a store holds and which one is the main job's: its core,off_topic run over the corpus,
never whatever was stored last (real retrieval runs, real DuckDB). The ``main`` RUN value that reads it is
tested with the other RUN forms (tests/eval/test_run_value.py)."""

from __future__ import annotations

import pytest

from nomad_lab.cli import main
from nomad_lab.eval.stored_runs import list_runs, main_run, runs_over
from nomad_lab.store import Store
from tests.support.retrieval import CORPUS


def test_main_is_the_main_suite_over_the_corpus_not_the_latest_run(several_runs: dict) -> None:
    runs = several_runs["runs"]
    with Store(several_runs["store"], read_only=True) as store:
        assert store.run_ids("retrieval") == list(runs.values())
        assert runs_over(store, CORPUS) == [runs["core"], runs["no_distractors"], runs["main"]]
        assert runs_over(store, several_runs["grown"]) == [runs["grown"]]
        assert main_run(store, CORPUS) == runs["main"]
        assert main_run(store, several_runs["grown"]) is None  # a core run over it is not a main run
        listed = {r.run_id: r for r in list_runs(store, [CORPUS, several_runs["grown"]])}
    assert listed[runs["main"]].suites == "core,off_topic" and listed[runs["core"]].suites == "core"
    assert listed[runs["grown"]].corpus.endswith("grown") and listed[runs["main"]].corpus.endswith("corpus")
    assert not listed[runs["no_distractors"]].distractors and listed[runs["main"]].distractors
    assert listed[runs["core"]].questions < listed[runs["main"]].questions
    assert listed[runs["main"]].embedder.startswith("st:")  # as --embedder spells it


def test_store_runs_lists_every_run_and_marks_main(
    several_runs: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(several_runs["store"])
    assert main(["store", "runs", "--store", store, "--corpus", str(CORPUS)]) == 0
    lines = capsys.readouterr().out.splitlines()
    runs = several_runs["runs"]
    assert lines[0].startswith("run · date (UTC) · corpus")
    assert [line.split(" · ")[0] for line in lines[1:5]] == list(runs.values())
    marked = [line for line in lines if line.endswith("<- main")]
    assert len(marked) == 1 and marked[0].startswith(runs["main"])
    grown_line = next(line for line in lines if line.startswith(runs["grown"]))
    assert "fingerprint " in grown_line  # a library the listing was not told about shows its fingerprint
    assert lines[-1] == f"main (the notebooks' default run): {runs['main']}"
    assert main(["store", "runs", "--store", store]) == 0  # the default corpus: no run over it here
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("main: no core,off_topic run over datasets/corpus yet; run `nomad-lab first-run`")
