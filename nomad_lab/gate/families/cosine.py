"""``cosine@F``: a floor on the raw semantic (cosine) score instead of the reranked one."""

from __future__ import annotations

from nomad_lab.gate import masks
from nomad_lab.gate.families import floor_family

FAMILY = floor_family("cosine", 20, masks.cosine_floor, lambda pools: pools.semantic)
