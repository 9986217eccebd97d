"""``tests.support.built_once``: the shared artefact folder is built once for all workers of a run, and a
build that failed is built again by the next worker to ask."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.support.built_once import built_once


class Factory:
    """What built_once reads of pytest's TempPathFactory: this worker's own temporary folder."""

    def __init__(self, base: Path) -> None:
        self.base = base

    def getbasetemp(self) -> Path:
        return self.base


def test_two_workers_asking_at_once_build_once_and_read_the_same_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    builds: list[Path] = []

    def build(folder: Path) -> None:
        builds.append(folder)
        time.sleep(0.2)  # long enough for the other worker to be waiting on the lock
        (folder / "artefact").write_text("built")

    got: list[Path] = []
    for w in ("popen-gw0", "popen-gw1"):
        (tmp_path / w).mkdir()
    workers = [
        threading.Thread(target=lambda w=w: got.append(built_once(Factory(tmp_path / w), "corpora", build)))
        for w in ("popen-gw0", "popen-gw1")
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert builds == [tmp_path / "corpora"] and got == [tmp_path / "corpora"] * 2
    assert (tmp_path / "corpora" / "artefact").read_text() == "built"


def test_a_failed_build_is_built_again_from_an_empty_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # alone: the session's own folder

    def broken(folder: Path) -> None:
        (folder / "half").write_text("")
        raise RuntimeError("killed midway")

    with pytest.raises(RuntimeError):
        built_once(Factory(tmp_path), "corpora", broken)
    seen: list[list[str]] = []
    folder = built_once(
        Factory(tmp_path), "corpora", lambda f: seen.append(sorted(p.name for p in f.iterdir()))
    )
    assert folder == tmp_path / "corpora" and seen == [[]]
    built_once(Factory(tmp_path), "corpora", lambda f: seen.append(["built twice"]))
    assert seen == [[]]
