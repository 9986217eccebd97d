"""``floor@F``: the reference's score floor on the final (reranked) score; ``floor`` sweeps FLOOR_GRID."""

from __future__ import annotations

from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE
from nomad_lab.gate import masks
from nomad_lab.gate.families import OMIT_SWEEP, Family, top_value

FAMILY = Family(
    name="floor",
    order=10,
    form="floor[@F]",
    target=False,
    value="floor",
    low=0.0,
    high=1.0,
    omitted=OMIT_SWEEP,
    keep=lambda pools, atom, points, inputs: masks.score_floor(pools, points),
    score=lambda pools, atom, inputs: top_value(pools.score, pools.valid),
    grid=lambda: masks.FLOOR_GRID,
    default=RAG_MIN_FINAL_SCORE,
)
