"""The explore snapshot: one operating point re-gated from stored pools, leaked cases listed."""

import numpy as np

from nomad_lab.gate.pools import pools_from_records
from nomad_lab.studies.gating.explore import ExploreData, snapshot

RECORDS = [
    {
        "id": "haiku",
        "tags": [],
        "expectRefusal": True,
        "relevantDocIds": [],
        "candidates": [{"docId": "walden", "score": 0.7, "semanticScore": 0.6}],
    },
    {
        "id": "hello",
        "tags": [],
        "expectRefusal": True,
        "relevantDocIds": [],
        "candidates": [{"docId": "poem", "score": 0.4, "semanticScore": 0.4}],
    },
    {
        "id": "boil",
        "tags": [],
        "expectRefusal": False,
        "relevantDocIds": ["water"],
        "candidates": [{"docId": "water", "score": 0.66, "semanticScore": 0.6}],
    },
]
DATA = ExploreData(
    pools_from_records(RECORDS),
    ["haiku please", "hello", "how long to boil"],
    ["Walden text", "poem text", "water text"],
    np.array([0.0, 1.0, 1.0]),
    "m",
)


def test_floor_and_judge_move_leak_and_recall() -> None:
    open_gate = snapshot(DATA, 0.0, use_judge=False)
    assert (open_gate.leak, open_gate.recall) == (1.0, 1.0)
    assert [c.golden_id for c in open_gate.leaked] == ["haiku", "hello"]  # highest top score first
    assert open_gate.leaked[0].top_doc == "walden" and open_gate.leaked[0].passage == "Walden text"
    floored = snapshot(DATA, 0.5, use_judge=False)
    assert (floored.leak, floored.recall) == (0.5, 1.0)
    judged = snapshot(DATA, 0.5, use_judge=True)
    assert (judged.leak, judged.recall, judged.leaked) == (0.0, 1.0, [])
    too_high = snapshot(DATA, 0.68, use_judge=True)
    assert (too_high.leak, too_high.recall) == (0.0, 0.0)


def test_a_missing_or_empty_store_says_what_to_run_first_in_one_line(tmp_path) -> None:
    from nomad_lab.store import Store
    from nomad_lab.studies.gating.explore import RETRIEVAL_FIRST, explorer

    missing = explorer(tmp_path / "none.duckdb")
    Store(tmp_path / "empty.duckdb").close()
    empty = explorer(tmp_path / "empty.duckdb")
    for shown, what in ((missing, "no store yet"), (empty, "no retrieval run stored yet")):
        assert "\n" not in shown.data and what in shown.data and f"`{RETRIEVAL_FIRST}`" in shown.data


def test_a_broken_store_is_still_an_error_not_a_hint(tmp_path) -> None:
    """Only "nothing stored yet" becomes the one-line hint; a store that cannot be read still fails."""
    import pytest

    from nomad_lab.store import StoreError
    from nomad_lab.studies.gating.explore import explorer

    broken = tmp_path / "broken.duckdb"
    broken.write_bytes(b"not a duckdb file" * 100)
    with pytest.raises(StoreError):
        explorer(broken)


def test_the_latest_run_over_a_corpus_skips_later_runs_over_other_corpora(tmp_path, embedder) -> None:
    import shutil

    from nomad_lab.store import Store
    from nomad_lab.studies.gating.explore import NothingToExplore, latest_run_over, load_explore_data
    from tests.support.retrieval import CORPUS, fixture_run

    store = tmp_path / "ws.duckdb"
    mine = fixture_run(store, embedder)
    no_distractors = fixture_run(store, embedder, include_distractors=False)
    grown = tmp_path / "grown"
    shutil.copytree(CORPUS, grown)
    (grown / "extra-book.md").write_text("# Extra\n\nA chapter about whales and the sea, told at length.\n")
    later = fixture_run(store, embedder, corpus_dir=grown)
    with Store(store, read_only=True) as opened:
        assert opened.run_ids("retrieval") == [mine, no_distractors, later]
        assert latest_run_over(opened, CORPUS) == no_distractors  # the newest run over these documents
        assert latest_run_over(opened, grown) == later
        assert latest_run_over(opened, tmp_path / "grown") == later
    assert load_explore_data(store).run_id == later  # no corpus: whatever was stored last
    assert load_explore_data(store, corpus=CORPUS).run_id == no_distractors
    other = tmp_path / "other"
    other.mkdir()
    (other / "only.md").write_text("# Only\n\nNothing anyone asked about.\n")
    try:
        load_explore_data(store, corpus=other)
    except NothingToExplore as exc:
        assert f"no retrieval run over {other} stored yet" in str(exc)
    else:
        raise AssertionError("a corpus without a stored run must say what to run first")
