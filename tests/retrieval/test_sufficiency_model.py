"""The sufficiency scorer's parts that need no model: the units a question reads, the answer-type shift,
and a question's best unit under a type weight (the weight can flip which question clears a threshold)."""

import numpy as np

from nomad_lab.retrieval.sufficiency_model import best_per_question, question_units, split_by, type_shift

PASSAGES = [
    "# Burns\n\nCool the burn under running water. Keep cooling it for 20 minutes. Cover it loosely.",
    "# Radios\n\nA handheld radio reaches a few miles. Repeaters extend its range.",
]


def test_a_question_reads_its_k_best_units_with_their_context() -> None:
    units = question_units("How long should I keep cooling a burn?", PASSAGES, k=2)
    assert len(units) == 2 and all(u.startswith("Burns: ") for u in units)
    assert any("20 minutes" in u for u in units)
    assert question_units("anything", [], k=3) == []


def test_the_type_shift_marks_units_holding_a_value_of_the_asked_kind() -> None:
    units = ["Keep cooling it for 20 minutes.", "Cover it loosely."]
    assert type_shift("How many minutes should I cool a burn?", units).tolist() == [1.0, -1.0]
    assert type_shift("Why cool a burn?", units).tolist() == [0.0, 0.0]


def test_best_per_question_under_a_type_weight() -> None:
    logits = split_by(np.array([1.0, 0.5, 2.0, -1.0]), [2, 0, 2])
    shifts = [np.array([-1.0, 1.0]), np.zeros(0), np.array([-1.0, -1.0])]
    plain = best_per_question(logits, shifts, 0.0)
    assert plain[0] == 1.0 and np.isnan(plain[1]) and plain[2] == 2.0
    weighted = best_per_question(logits, shifts, 1.0)
    assert weighted[0] == 1.5 and weighted[2] == 1.0  # the unit with the value now leads; the other falls
