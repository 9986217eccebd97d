"""How busy the machine was around a timed step: the load average, and the share of the CPUs that other
processes used while it ran.

Why: a time is a cost only when nothing else ran beside it. The main job's steps were once timed beside
the test suite (a judge call's median 20.1 s against 5.6 s quiet) and the pages quoted those times as
costs. So every timed step records what else ran: ``othersCpuShare`` is the CPU time the whole machine
spent busy, minus this process's and its children's own, over the step's wall time and the CPU count
(0: the machine was ours; 1: every core was busy with other work all along). Read from ``/proc/stat`` on
Linux; elsewhere only the load average is known (the share is None). Standard library only.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

PROC_STAT = Path("/proc/stat")
QUIET_SHARE = 0.10
"""At most this share of the CPUs used by other processes: a step timed so is called quiet."""


def busy_cpu_seconds(stat: Path = PROC_STAT) -> float | None:
    """Seconds every CPU of the machine spent busy since boot (``/proc/stat``'s first line, less idle
    and iowait), None where there is no such file."""
    try:
        fields = stat.read_text(encoding="ascii").splitlines()[0].split()
    except (OSError, IndexError):
        return None
    ticks = [int(v) for v in fields[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    """CPU seconds this process and its waited-for children have used (user + system)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass(frozen=True)
class LoadMark:
    """The machine's counters at one instant (see :func:`mark`)."""

    wall: float
    busy: float | None
    own: float
    loadavg: tuple[float, float, float]


def mark() -> LoadMark:
    """Take the counters now; :func:`load_between` compares two marks."""
    return LoadMark(time.perf_counter(), busy_cpu_seconds(), own_cpu_seconds(), os.getloadavg())


def load_between(start: LoadMark, end: LoadMark, cpus: int | None = None) -> dict[str, object]:
    """The load around a step: the load average before and after (1, 5, 15 min), other processes' CPU
    share over its wall time (None when not measurable), and whether that makes it a quiet timing."""
    wall = max(end.wall - start.wall, 1e-9)
    share = None
    if start.busy is not None and end.busy is not None:
        others = (end.busy - start.busy) - (end.own - start.own)
        share = round(min(1.0, max(0.0, others / (wall * (cpus or os.cpu_count() or 1)))), 3)
    return {
        "loadBefore": [round(v, 2) for v in start.loadavg],
        "loadAfter": [round(v, 2) for v in end.loadavg],
        "othersCpuShare": share,
        "quiet": None if share is None else share <= QUIET_SHARE,
        "cpus": cpus or os.cpu_count(),
    }
