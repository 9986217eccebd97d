"""The ``ce:`` family: parsed like any target family, an unbounded logit, all or nothing on the pool."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from nomad_lab.gate.apply import points_for, spec_mask, spec_needs
from nomad_lab.gate.families import GateInputs, Need
from nomad_lab.gate.pools import PoolSet
from nomad_lab.gate.spec import GateSpecError, parse_gate_spec


def pools(n: int = 4) -> PoolSet:
    """``n`` questions with two candidates each; question 3's pool is empty."""
    valid = np.ones((n, 2), dtype=bool)
    valid[3] = False
    return SimpleNamespace(valid=valid, size=n)  # type: ignore[return-value]


def test_specs_with_windows_and_negative_logits_parse_and_read_back() -> None:
    spec = parse_gate_spec("ce:ms-marco-minilm-l12?window=120&stride=60@-2.5")
    atom = spec.atoms[0]
    assert (atom.family, atom.target, atom.value) == ("ce", "ms-marco-minilm-l12?window=120&stride=60", -2.5)
    assert str(spec) == "ce:ms-marco-minilm-l12?window=120&stride=60@-2.5"
    assert parse_gate_spec("ce:/models/my-ce").atoms[0].sweeps
    assert spec_needs("floor@0.3+ce:ms-marco-minilm-l12@1") == (Need("pair_scores", "ms-marco-minilm-l12"),)
    with pytest.raises(GateSpecError, match="ce needs a target"):
        parse_gate_spec("ce@1")
    with pytest.raises(GateSpecError, match="must be finite"):
        parse_gate_spec("ce:ms-marco-minilm-l12@inf")


def test_the_gate_keeps_whole_pools_at_or_above_the_logit() -> None:
    best = np.array([3.0, -4.0, -1.0, np.nan])
    inputs = GateInputs({Need("pair_scores", "m"): SimpleNamespace(best=best)})
    points, mask = spec_mask(pools(), parse_gate_spec("ce:m@-1"), inputs)
    assert points.tolist() == [-1.0]
    assert mask[0].tolist() == [[True, True], [False, False], [True, True], [False, False]]
    swept = points_for(parse_gate_spec("ce:m").atoms[0], pools(), inputs)  # the score's own quantiles
    assert len(swept) > 1 and swept.min() <= -4.0 and np.isfinite(swept).all()
    with pytest.raises(Exception, match="pair_scores 'other' was not gathered"):
        spec_mask(pools(), parse_gate_spec("ce:other@0"), inputs)
