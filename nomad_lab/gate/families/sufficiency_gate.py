"""``sufficiency:zero-shot[@T]`` or ``sufficiency:GATE_FILE[@T]``: does a sentence of the top-5 passages
state the answer? Keep a question's passages when its best sentence unit (the sentence with its heading
and the sentence before it, the few sharing most question words) scores >= T.

``zero-shot`` scores units with the offline ms-marco L12 model's own logit (an omitted T sweeps its
quantiles); a gate file from ``nomad-lab study sufficiency`` with its fine-tuned containment head and
answer-type weight (an omitted T is the file's threshold, chosen for answerable keep >= 0.90). A second
decision after the topicality gate: its action in the assistant is a setting
(:data:`nomad_lab.core.prompts.SUFFICIENCY_ACTIONS`).

Needs ``Need("sufficiency_scores", TARGET)``; the gatherer refuses a gate file fitted on another run's
embedder or index.
"""

from __future__ import annotations

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate.answer_file import SufficiencyGate
from nomad_lab.gate.families import best_score_family

ZERO_SHOT = "zero-shot"


def saved(atom: object) -> float:
    """The spec's number, else the gate file's threshold (``zero-shot`` has none: give ``@T``)."""
    if atom.value is not None:  # type: ignore[attr-defined]
        return float(atom.value)  # type: ignore[attr-defined]
    if atom.target == ZERO_SHOT:  # type: ignore[attr-defined]
        raise NomadLabError(
            "sufficiency:zero-shot has no saved threshold; give one (sufficiency:zero-shot@T)"
        )
    return SufficiencyGate.load(atom.target).threshold  # type: ignore[attr-defined]


FAMILY = best_score_family(
    "sufficiency",
    75,
    "sufficiency:zero-shot|GATE_FILE[@T]",
    "logit",
    "sufficiency_scores",
    best=lambda scores: scores,  # the gatherer hands in each pool's best unit score already
    saved=saved,
)
