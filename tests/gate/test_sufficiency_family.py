"""The ``sufficiency:`` gate family: parsed from a spec, needs its scores, keeps all or nothing at its
number, and refuses a zero-shot spec without one."""

import numpy as np
import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate.apply import spec_mask, spec_needs
from nomad_lab.gate.families import GateInputs, Need
from nomad_lab.gate.pools import pools_from_records

RECORDS = [
    {"id": f"q{i}", "candidates": [{"docId": "d", "score": 0.9}], "relevantDocIds": ["d"]} for i in range(3)
]


def test_zero_shot_spec_needs_its_scores_and_keeps_pools_at_or_above_its_logit() -> None:
    pools = pools_from_records(RECORDS)
    need = Need("sufficiency_scores", "zero-shot")
    assert spec_needs("sufficiency:zero-shot@1.5") == (need,)
    inputs = GateInputs({need: np.array([2.0, 1.0, np.nan])})
    points, mask = spec_mask(pools, "sufficiency:zero-shot@1.5", inputs)
    assert points.tolist() == [1.5] and mask[0, :, 0].tolist() == [True, False, False]


def test_zero_shot_without_a_number_is_one_error_line() -> None:
    pools = pools_from_records(RECORDS)
    inputs = GateInputs({Need("sufficiency_scores", "zero-shot"): np.zeros(3)})
    with pytest.raises(NomadLabError, match="sufficiency:zero-shot@T"):
        spec_mask(pools, "sufficiency:zero-shot", inputs)
