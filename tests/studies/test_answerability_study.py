"""The answerability study is registered opt-in (its held-out keep decisions are ``learned_figures``'
own, tested in tests/gate/test_crossval.py), and the reading and cost records it shares with the
sufficiency study."""

import numpy as np

from nomad_lab.studies.gating.answerability import STUDY, per_question, read_every_pair, study_seconds


def test_the_study_is_opt_in():
    assert STUDY.name == "answerability" and not STUDY.published


class _Cache:
    """A body cache that reads a pair as its index in the first call, and counts what it computed."""

    def __init__(self) -> None:
        self.computed = 0
        self.asked: list[list[tuple[str, str]]] = []

    def read(self, pairs, progress=None):
        self.asked.append(list(pairs))
        self.computed += len(pairs)
        if progress:
            progress(len(pairs))
        return [f"out:{q}:{p}" for q, p in pairs], np.arange(len(pairs), dtype=float) / 10


def test_every_distinct_pair_is_read_once_and_looked_up_by_pair():
    cache = _Cache()
    pairs = [("q1", "a"), ("q2", "b"), ("q1", "a"), ("q3", "c")]
    reading = read_every_pair(cache, pairs, "test: reading", show=False)
    assert cache.asked == [[("q1", "a"), ("q2", "b"), ("q3", "c")]]
    assert reading.outs_of([("q3", "c"), ("q1", "a")]) == ["out:q3:c", "out:q1:a"]
    assert reading.zero_shot == {("q1", "a"): 0.0, ("q2", "b"): 0.1, ("q3", "c"): 0.2}
    seconds = study_seconds(0.0, reading, cache, [1.0, 3.0])
    assert seconds["read"] == reading.seconds >= 0 and seconds["trainMean"] == 2.0
    assert (seconds["pairs"], seconds["readPairs"], seconds["trainings"]) == (3, 3, 2)


def test_a_timing_is_per_question_in_texts_and_milliseconds():
    assert per_question(4, 10, "units", 2.0) == {
        "questions": 4,
        "units": 10,
        "unitsPerQuestion": 2.5,
        "msPerQuestion": 500.0,
    }
    assert per_question(0, 0, "windows", 0.0)["windowsPerQuestion"] == 0.0
