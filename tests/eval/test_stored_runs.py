"""Which runs a store holds and which one ``run = "main"`` means: the main job's core,off_topic run over
the default corpus, never whatever was stored last (real retrieval runs, real DuckDB)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.eval.stored_runs import NoSuchRun, list_runs, main_run, resolve_run, runs_over
from nomad_lab.store import Store
from tests.support.retrieval import CORPUS, fixture_run


@pytest.fixture
def several(tmp_path: Path, embedder) -> dict:
    """The main run, then one without distractors, one of another suite, one of core over a grown library."""
    store = tmp_path / "ws.duckdb"
    grown = tmp_path / "grown"
    shutil.copytree(CORPUS, grown)
    (grown / "extra-book.md").write_text("# Extra\n\nA chapter about whales and the sea, told at length.\n")
    runs = {
        "main": fixture_run(store, embedder),
        "no_distractors": fixture_run(store, embedder, include_distractors=False),
        "core": fixture_run(store, embedder, suite="core"),
        "grown": fixture_run(store, embedder, suite="core", corpus_dir=grown),
    }
    return {"store": store, "grown": grown, "runs": runs}


def test_main_is_the_main_suite_over_the_corpus_not_the_latest_run(several: dict) -> None:
    runs = several["runs"]
    with Store(several["store"], read_only=True) as store:
        assert store.run_ids("retrieval") == list(runs.values())
        assert runs_over(store, CORPUS) == [runs["core"], runs["no_distractors"], runs["main"]]
        assert runs_over(store, several["grown"]) == [runs["grown"]]
        assert main_run(store, CORPUS) == runs["main"]
        assert resolve_run(store, "main", CORPUS) == resolve_run(store, None, CORPUS) == runs["main"]
        assert resolve_run(store, runs["core"], CORPUS) == runs["core"]  # an id is taken as given
        with pytest.raises(NoSuchRun, match=r"no run 'r-none'.*nomad-lab store runs"):
            resolve_run(store, "r-none", CORPUS)
        with pytest.raises(NoSuchRun, match=r"no core,off_topic run over .*grown stored yet.*--corpus"):
            resolve_run(store, "main", several["grown"])
        listed = {r.run_id: r for r in list_runs(store, [CORPUS, several["grown"]])}
    assert listed[runs["main"]].suites == "core,off_topic" and listed[runs["core"]].suites == "core"
    assert listed[runs["grown"]].corpus.endswith("grown") and listed[runs["main"]].corpus.endswith("corpus")
    assert not listed[runs["no_distractors"]].distractors and listed[runs["main"]].distractors
    assert listed[runs["core"]].questions < listed[runs["main"]].questions
    assert listed[runs["main"]].embedder.startswith("st:")  # as --embedder spells it


def test_store_runs_lists_every_run_and_marks_main(several: dict, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(several["store"])
    assert main(["store", "runs", "--store", store, "--corpus", str(CORPUS)]) == 0
    lines = capsys.readouterr().out.splitlines()
    runs = several["runs"]
    assert lines[0].startswith("run · date (UTC) · corpus")
    assert [line.split(" · ")[0] for line in lines[1:5]] == list(runs.values())
    marked = [line for line in lines if line.endswith("<- main")]
    assert len(marked) == 1 and marked[0].startswith(runs["main"])
    grown_line = next(line for line in lines if line.startswith(runs["grown"]))
    assert "fingerprint " in grown_line  # a library the listing was not told about shows its fingerprint
    assert lines[-1] == f"main (the notebooks' default run): {runs['main']}"
    assert main(["store", "runs", "--store", store]) == 0  # the default corpus: no run over it here
    assert capsys.readouterr().out.splitlines()[-1].startswith("main: none yet (no core,off_topic run over")
