"""Workspace paths as notebooks mean them: relative to the repository root, not the kernel's directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from nomad_lab.core.workspace import PROJECT_ROOT, in_workspace, store_path
from tests.support.paths import ROOT


def test_relative_paths_resolve_under_the_repository_whatever_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a kernel started in notebooks/ or anywhere else
    assert PROJECT_ROOT == ROOT
    assert in_workspace("runs/nomad-lab.duckdb") == ROOT / "runs" / "nomad-lab.duckdb"
    assert in_workspace(Path("datasets")) == ROOT / "datasets"
    assert in_workspace(tmp_path / "x.duckdb") == tmp_path / "x.duckdb"  # absolute: unchanged
    assert in_workspace("~/s.duckdb") == Path.home() / "s.duckdb"
    assert in_workspace(None) is None  # "the default", left to the callee


def test_store_path_reads_the_environment_when_called(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOMAD_LAB_STORE", str(tmp_path / "env.duckdb"))
    assert store_path() == tmp_path / "env.duckdb"
    monkeypatch.setenv("NOMAD_LAB_STORE", "runs/other.duckdb")
    assert store_path() == ROOT / "runs" / "other.duckdb"
    monkeypatch.delenv("NOMAD_LAB_STORE")
    assert store_path() == ROOT / "runs" / "nomad-lab.duckdb"
    assert store_path("my.duckdb") == ROOT / "my.duckdb"  # an explicit path wins over the environment
