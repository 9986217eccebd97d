"""``answer:GATE_FILE[@T]``: an answerability cross-encoder fine-tuned on the goldens
(``nomad-lab study answerability``); keep a question's passages when the best logit over the windows of
its top-5 set is >= T (the file's own threshold when T is omitted).

Needs ``Need("answer_scores", GATE_FILE)``: the gatherer runs the file's head over the stored sets and
refuses a run from another embedder or index than the one the file was fitted on.
"""

from __future__ import annotations

import math

import numpy as np

from nomad_lab.gate.answer_file import AnswerGate
from nomad_lab.gate.families import OMIT_SAVED, Family, GateInputs, Need, all_or_nothing, saved_threshold
from nomad_lab.gate.pools import PoolSet


def needs(atom: object) -> tuple[Need, ...]:
    return (Need("answer_scores", atom.target),)  # type: ignore[attr-defined]


def score(pools: PoolSet, atom: object, inputs: GateInputs) -> np.ndarray:
    return np.asarray(inputs[needs(atom)[0]], dtype=float)


FAMILY = Family(
    name="answer",
    order=70,
    form="answer:GATE_FILE[@T]",
    target=True,
    value="logit",
    low=-math.inf,
    high=None,
    omitted=OMIT_SAVED,
    keep=lambda pools, atom, points, inputs: all_or_nothing(score(pools, atom, inputs), pools, points),
    score=score,
    saved=saved_threshold(AnswerGate.load),
    needs=needs,
)
