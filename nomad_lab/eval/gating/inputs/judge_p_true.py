"""``judge`` (key: a judge spec, default the embedded judge): P(true) as a feature for learned gates
(0.5 where the set was not judged, so an unjudged question carries no evidence either way)."""

from __future__ import annotations

import numpy as np

from nomad_lab.backends.backend_spec import DEFAULT_SPEC
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.inputs import verdicts
from nomad_lab.gate.features import FeatureBlock

KIND = "judge"


def gather(ctx: GatherContext, key: str) -> FeatureBlock:
    p_true = verdicts.gather(ctx, key or DEFAULT_SPEC).p_true
    return FeatureBlock(np.nan_to_num(p_true, nan=0.5)[:, None], ["judge_p_true"])
