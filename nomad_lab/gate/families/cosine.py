"""``cosine@F``: a floor on the raw semantic (cosine) score instead of the reranked one."""

from __future__ import annotations

from nomad_lab.gate import masks
from nomad_lab.gate.families import OMIT_SWEEP, Family, top_value

FAMILY = Family(
    name="cosine",
    order=20,
    form="cosine[@F]",
    target=False,
    value="floor",
    low=0.0,
    high=1.0,
    omitted=OMIT_SWEEP,
    keep=lambda pools, atom, points, inputs: masks.cosine_floor(pools, points),
    score=lambda pools, atom, inputs: top_value(pools.semantic, pools.valid),
    grid=lambda: masks.FLOOR_GRID,
)
