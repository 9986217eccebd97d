"""A directory of expensive test artefacts built once per test run, however many xdist workers ask for it.

A session fixture runs once per worker, so a fixture that embeds a real corpus would embed it once on each
worker that happens to run one of its tests. :func:`built_once` builds into a folder every worker of the run
sees (the parent of the workers' own temporary folders), under a file lock: the first worker to ask builds,
the others wait for it and then read what it built. Run without xdist, the folder is the session's own.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["built_once"]


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name`` after ``build`` filled it, once per test run; every worker gets the same one.

    Readers must copy what they write to: the folder is shared by every worker of the run. A build that
    failed midway is not marked done, so the next worker to ask builds again from an empty folder.
    """
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the run's folder under xdist
    target, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, however the build ends
        if not done.exists():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            build(target)
            done.touch()
    return target
