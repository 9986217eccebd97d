"""Measurement helpers shared by the benchmark scripts (run as ``python benchmarks/<name>.py``)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable


def peak_mib(fn: Callable[[], object]) -> float:
    """Peak traced allocation of a separate run (tracing slows Python code, so it is never timed)."""
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak
