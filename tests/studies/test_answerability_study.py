"""The answerability study is registered opt-in (its held-out keep decisions are ``learned_figures``'
own, tested in tests/gate/test_crossval.py)."""

from nomad_lab.studies.gating.answerability import STUDY


def test_the_study_is_opt_in():
    assert STUDY.name == "answerability" and not STUDY.published
