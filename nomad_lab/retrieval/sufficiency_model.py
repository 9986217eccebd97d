"""The sufficiency check's scorer: does a sentence of the top-5 passages state the answer?

A question's top-5 passages are cut into sentence units with their context
(:mod:`nomad_lab.data.sentence_units`), the :data:`~nomad_lab.data.sentence_units.CHOSEN` units sharing
the most question words are read by the ms-marco L12 body (frozen, its last-layer states cached by
:mod:`nomad_lab.retrieval.answer_cache`), and a head scores each (question, unit) pair: the ONNX model's
own logit (``zero-shot``) or a containment head fine-tuned by ``nomad-lab study sufficiency``. The
expected-answer-type evidence (:mod:`nomad_lab.data.answer_types`) enters as a shift of each unit's
logit, ``weight`` x (+1 the unit holds a value of the asked type, -1 it holds none, 0 the question asks
for no value), with the weight chosen inside training folds: an input, never a gate by itself.

A question's score is its best unit's (NaN: nothing retrieved).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.sentence_units import CHOSEN, UNIT_WORDS
from nomad_lab.gate.answer_file import SufficiencyGate
from nomad_lab.gate.unit_reader import head_logit, question_units, type_shift
from nomad_lab.retrieval.answer_cache import BodyCache, gate_head_weights
from nomad_lab.retrieval.answer_model import AnswerBody, shared_body

__all__ = [
    "ZERO_SHOT",
    "best_per_question",
    "question_units",
    "split_by",
    "sufficiency_check",
    "sufficiency_scores",
    "type_shift",
]

ZERO_SHOT = "zero-shot"
"""The ``sufficiency:`` target that scores units with the ONNX model's own logit (no gate file)."""


def best_per_question(
    logits: Sequence[np.ndarray], shifts: Sequence[np.ndarray], weight: float
) -> np.ndarray:
    """Each question's best ``logit + weight * shift`` over its units (NaN: no unit)."""
    return np.array(
        [
            float(np.max(lg + weight * sh)) if len(lg) else np.nan
            for lg, sh in zip(logits, shifts, strict=True)
        ]
    )


def split_by(values: np.ndarray, sizes: Sequence[int]) -> list[np.ndarray]:
    """``values`` cut into consecutive pieces of ``sizes``."""
    return np.split(np.asarray(values, dtype=float), np.cumsum(sizes)[:-1]) if sizes else []


def sufficiency_scores(
    target: str,
    questions: Sequence[tuple[str, Sequence[str]]],
    cache_folder: str | Path | None,
    where: str,
    progress: Callable[[int], None] | None = None,
    body: AnswerBody | None = None,
) -> np.ndarray:
    """Each (question, passages) sufficiency score under ``target``: :data:`ZERO_SHOT` or a gate file;
    the body's reading of each unit is cached under ``cache_folder`` (None: read, not cached)."""
    body = body or shared_body()
    gate = None if target == ZERO_SHOT else SufficiencyGate.load(target)
    scoring = (gate.scoring if gate else None) or {}
    k, words = int(scoring.get("units", CHOSEN)), int(scoring.get("unitWords", UNIT_WORDS))
    units = [question_units(q, passages, k, words) for q, passages in questions]
    pairs = [(q, u) for (q, _), us in zip(questions, units, strict=True) for u in us]
    if cache_folder is None:
        outs, zero = body.read(pairs)
    else:
        outs, zero = BodyCache(cache_folder, body).read(pairs, progress)
    if gate is None:
        logits = zero
    else:  # the head in double precision, pair by pair, as the runtime and the bundle compute it
        weights = gate_head_weights(gate, body.digest, where)
        logits = np.array([head_logit(weights, body.heads, o.k, o.v, o.h) for o in outs], dtype=float)
    shifts = [type_shift(q, us) for (q, _), us in zip(questions, units, strict=True)]
    weight = float(scoring.get("typeWeight", 0.0))
    return best_per_question(split_by(logits, [len(us) for us in units]), shifts, weight)


def sufficiency_check(target: str, threshold: float | None = None) -> Callable[[str, Sequence[str]], bool]:
    """The assistant's check (``PipelineConfig.sufficiency_check``): ``check(query, passages)`` is True
    when the best unit scores >= ``threshold`` (None: the gate file's; ``zero-shot`` needs one). The
    body is loaded on the first call, once per process (:func:`shared_body`); nothing is cached on disk."""
    if threshold is None:
        if target == ZERO_SHOT:
            raise NomadLabError("sufficiency check zero-shot: give a threshold (a logit)")
        threshold = SufficiencyGate.load(target).threshold

    def check(query: str, passages: Sequence[str]) -> bool:
        where = f"sufficiency check {target}"
        score = sufficiency_scores(target, [(query, passages)], None, where)[0]
        return bool(score >= threshold)

    return check
