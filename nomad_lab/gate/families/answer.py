"""``answer:GATE_FILE[@T]``: an answerability cross-encoder fine-tuned on the goldens
(``nomad-lab study answerability``); keep a question's passages when the best logit over the windows of
its top-5 set is >= T (the file's own threshold when T is omitted).

Needs ``Need("answer_scores", GATE_FILE)``: the gatherer runs the file's head over the stored sets and
refuses a run from another embedder or index than the one the file was fitted on.
"""

from __future__ import annotations

from nomad_lab.gate.answer_file import AnswerGate
from nomad_lab.gate.families import best_score_family, saved_threshold

FAMILY = best_score_family(
    "answer",
    70,
    "answer:GATE_FILE[@T]",
    "logit",
    "answer_scores",
    best=lambda scores: scores,  # the gatherer hands in each pool's best logit already
    saved=saved_threshold(AnswerGate.load),
)
