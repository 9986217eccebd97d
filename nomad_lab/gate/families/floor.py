"""``floor@F``: the reference's score floor on the final (reranked) score; ``floor`` sweeps FLOOR_GRID."""

from __future__ import annotations

from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE
from nomad_lab.gate import masks
from nomad_lab.gate.families import floor_family

FAMILY = floor_family("floor", 10, masks.score_floor, lambda pools: pools.score, default=RAG_MIN_FINAL_SCORE)
