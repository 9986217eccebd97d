"""Measurement helpers shared by the benchmark scripts (run as ``python benchmarks/<name>.py``)."""

from __future__ import annotations

import io
import os
import platform
import shlex
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from datetime import UTC, datetime
from pathlib import Path

from nomad_lab.eval import machine_load
from nomad_lab.eval.provenance import git_state, provenance_record, write_provenance

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "benchmarks"


def best_of(fn: Callable[[], object], repeats: int = 3) -> float:
    """The fastest of ``repeats`` timed runs, in seconds: the least disturbed by the rest of the machine."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def peak_mib(fn: Callable[[], object]) -> float:
    """Peak traced allocation of a separate run (tracing slows Python code, so it is never timed)."""
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak


def load_line(load: dict) -> str:
    """What else ran while it was measured (:mod:`nomad_lab.eval.machine_load`): a table timed beside
    other work says so, and its times are not costs."""
    share = load["othersCpuShare"]
    if share is None:
        return f"load average {load['loadBefore'][0]:.2f} -> {load['loadAfter'][0]:.2f}"
    verdict = "quiet" if load["quiet"] else "not quiet: its times are not costs"
    return (
        f"load average {load['loadBefore'][0]:.2f} -> {load['loadAfter'][0]:.2f} · other processes used "
        f"{share:.0%} of the CPUs ({verdict})"
    )


def machine_line() -> str:
    """Where and when a table was measured: CPU, cores, OS, Python, commit (and whether dirty), date."""
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [
            ln.split(":", 1)[1].strip()
            for ln in cpuinfo.read_text().splitlines()
            if ln.startswith("model name")
        ]
        cpu = names[0] if names else cpu
    git = git_state()  # the one rule for dirty: changes to code, notebooks or data, never results/
    sha = (git["gitSha"] or "?")[:7]
    state = f"commit {sha}" + (" + uncommitted changes" if git["gitDirty"] else "")
    return (
        f"machine: {cpu} · {os.cpu_count()} cores · {platform.system()} {platform.release()} · "
        f"Python {platform.python_version()} · {state} · {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    )


class _Tee(io.TextIOBase):
    def __init__(self, *streams: io.TextIOBase) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


@contextmanager
def published(script: str) -> Iterator[None]:
    """Print as usual and, when the benchmark finishes, store what it printed as
    ``results/benchmarks/<script>.md``, headed by its exact command and the machine line: a speed claim
    in the README must have a stored table beside its command. An interrupted run stores nothing."""
    name = Path(script).stem
    captured = io.StringIO()
    start = machine_load.mark()
    with redirect_stdout(_Tee(sys.stdout, captured)):
        yield
    load = load_line(machine_load.load_between(start, machine_load.mark()))
    RESULTS.mkdir(parents=True, exist_ok=True)
    command = shlex.join(["python", f"benchmarks/{name}.py", *sys.argv[1:]])
    path = RESULTS / f"{name}.md"
    text = f"command: `{command}`\n\n{machine_line()}\n\n{load}\n\n{captured.getvalue()}"
    path.write_text(text, encoding="utf-8")
    record(path)
    print(f"wrote {path.relative_to(ROOT)}")


def record(path: Path) -> None:
    """The provenance of one benchmark table: this script's own command line, commit, dirty state and
    the models it opened (``provenance.json`` beside it, under ``files``)."""
    argv = ["python", f"benchmarks/{Path(sys.argv[0]).name}", *sys.argv[1:]]
    write_provenance(path.parent, provenance_record(argv=argv), file=path.name)
