"""A stored run judged by one model: the value the judge studies compare and the confidence study reads.

Its own module so that ``judges`` (which makes it) and ``judge_confidence`` (which reads it, and which
the judges study calls) need not import each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nomad_lab.gate.pools import PoolSet


@dataclass(frozen=True)
class JudgedRun:
    """A stored run's pools with one verdict per question (1 on topic, 0 off topic, NaN unjudged).

    ``p_true`` is the judge's P(on_topic = true) per question (NaN: none); ``gold`` the label of the set
    it read (``gate.agreement``: 1 on topic, 0 off topic, -1 answerable without a relevant document in
    the set, NaN not judged).
    """

    pools: PoolSet
    verdicts: np.ndarray
    ms: np.ndarray
    floor: float
    model: str
    stats_line: str
    failures: int
    calls: int
    p_true: np.ndarray | None = None
    gold: np.ndarray | None = None
    sampled: bool = False
