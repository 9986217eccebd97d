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


def test_every_leak_names_its_refusal_set_and_size() -> None:
    import pytest

    from nomad_lab.core.errors import NomadLabError
    from nomad_lab.studies.gating.explore import describe

    shot = snapshot(DATA, 0.0, use_judge=False)
    assert (shot.refusals, shot.n_refusals, shot.n_answerable) == ("off-topic", 2, 1)
    assert "leak 1.000 (off-topic refusals, n=2)" in describe(shot) and "(answerable, n=1)" in describe(shot)
    none = snapshot(DATA, 0.0, use_judge=False, refusals="unanswerable")
    assert none.n_refusals == 0 and none.leaked == [] and "unanswerable refusals, n=0" in describe(none)
    every = snapshot(DATA, 0.5, use_judge=False, refusals="")
    assert every.leak == 0.5 and "all refusals, n=2" in describe(every)
    with pytest.raises(NomadLabError, match="refusals 'rude': one of off-topic"):
        snapshot(DATA, 0.0, use_judge=False, refusals="rude")


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
    from nomad_lab.eval.stored_runs import MAIN_RUN_COMMAND
    from nomad_lab.store import Store
    from nomad_lab.studies.gating.explore import explorer

    missing = explorer(tmp_path / "none.duckdb")
    Store(tmp_path / "empty.duckdb").close()
    empty = explorer(tmp_path / "empty.duckdb")
    nothing = "no core,off_topic run over datasets/corpus stored yet"
    for shown, what in ((missing, "no store yet"), (empty, nothing)):
        assert "\n" not in shown.data and what in shown.data and f"`{MAIN_RUN_COMMAND}`" in shown.data
    unknown = explorer(tmp_path / "empty.duckdb", run="r-nope")
    assert "no run 'r-nope'" in unknown.data and "nomad-lab store runs" in unknown.data


def test_explore_reads_a_stored_run_and_never_retrieves(tmp_path) -> None:
    """``run`` is a RUN value read by the gating service; the forms that retrieve now are refused, as an
    error (bad input), not as the "run this first" line."""
    import pytest

    from nomad_lab.core.errors import NomadLabError
    from nomad_lab.studies.gating.explore import NothingToExplore, load_explore_data

    for run in ("retrieve", "retrieve:core"):
        with pytest.raises(NomadLabError, match=r"retrieving now needs goldens.*stored run") as caught:
            load_explore_data(tmp_path / "none.duckdb", run)
        assert not isinstance(caught.value, NothingToExplore)
    with pytest.raises(NomadLabError, match="bad run 'two words'"):
        load_explore_data(tmp_path / "none.duckdb", "two words")


def test_a_broken_store_is_still_an_error_not_a_hint(tmp_path) -> None:
    """Only "nothing stored yet" becomes the one-line hint; a store that cannot be read still fails."""
    import pytest

    from nomad_lab.store import StoreError
    from nomad_lab.studies.gating.explore import explorer

    broken = tmp_path / "broken.duckdb"
    broken.write_bytes(b"not a duckdb file" * 100)
    with pytest.raises(StoreError):
        explorer(broken)


def test_a_control_with_nothing_to_act_on_is_disabled_with_the_line_that_enables_it() -> None:
    """No judge named, no verdicts stored, verdicts without P(on topic): each one line naming what
    enables the disabled box (load_explore_data reads "none stored" as no verdicts, so the box is off)."""
    from dataclasses import replace

    from nomad_lab.studies.gating.explore import disabled_lines

    with_p = replace(DATA, p_true=np.array([0.1, 0.9, 0.9]), run_id="r-1")
    assert disabled_lines(with_p) == []
    (line,) = disabled_lines(replace(with_p, p_true=None))
    assert line.startswith("tau: disabled") and "`nomad-lab study judges --judge-model m --run r-1`" in line
    (line,) = disabled_lines(replace(with_p, verdicts=None, p_true=None))
    assert line.startswith("judge and tau: disabled, no verdicts of m stored") and "--run r-1" in line
    (line,) = disabled_lines(replace(with_p, judge_model=None, verdicts=None, p_true=None))
    assert "set `judge_model`" in line
