"""The load around a timed step: another process burning a CPU beside it shows in othersCpuShare."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from nomad_lab.eval import machine_load

BURN = "import time\nend = time.time() + 60\nwhile time.time() < end: pass\n"


def test_other_processes_share_excludes_the_step_s_own_cpu() -> None:
    start = machine_load.LoadMark(wall=0.0, busy=100.0, own=10.0, loadavg=(1.0, 0.5, 0.2))
    own_only = machine_load.LoadMark(wall=10.0, busy=105.0, own=15.0, loadavg=(1.0, 0.5, 0.2))
    assert machine_load.load_between(start, own_only, cpus=2)["othersCpuShare"] == 0.0
    beside = machine_load.LoadMark(wall=10.0, busy=115.0, own=15.0, loadavg=(2.0, 1.0, 0.4))
    load = machine_load.load_between(start, beside, cpus=2)  # 10 CPU-seconds of others over 2 x 10 s
    assert load["othersCpuShare"] == 0.5 and load["quiet"] is False and load["loadAfter"] == [2.0, 1.0, 0.4]
    assert machine_load.load_between(start, replace_busy(beside, None), cpus=2)["quiet"] is None


def replace_busy(mark: machine_load.LoadMark, busy: float | None) -> machine_load.LoadMark:
    return machine_load.LoadMark(mark.wall, busy, mark.own, mark.loadavg)


@pytest.mark.skipif(not machine_load.PROC_STAT.is_file(), reason="no /proc/stat on this system")
def test_a_process_burning_a_cpu_shows_in_the_machine_s_busy_seconds() -> None:
    burner = subprocess.Popen([sys.executable, "-c", BURN])  # another process, not a child we wait for
    try:
        time.sleep(0.3)
        start = machine_load.mark()
        time.sleep(1.0)
        end = machine_load.mark()
    finally:
        burner.kill()
        burner.wait()
    assert end.busy - start.busy >= 0.5 * (end.wall - start.wall)  # the burner's second, at the least
    assert 0.5 <= machine_load.load_between(start, end, cpus=1)["othersCpuShare"] <= 1.0


def test_busy_seconds_read_the_first_line_of_proc_stat(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n")
    import os

    ticks = os.sysconf("SC_CLK_TCK")
    assert machine_load.busy_cpu_seconds(stat) == pytest.approx(150 / ticks)
    assert machine_load.busy_cpu_seconds(tmp_path / "none") is None
