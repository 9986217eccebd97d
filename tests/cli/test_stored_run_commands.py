"""The commands that read a stored run (``gate fit``/``apply``/``export``, ``floors presets``, ``eval
corpus --check``) take a RUN value, resolved by the gating service's one resolver: a bad value is one line
before anything loads, and ``main`` and ``latest`` name the runs they mean (never each other)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.eval import gating
from nomad_lab.store import Store
from tests.support.paths import CORPUS, GOLDENS

CHECK = ["eval", "corpus", "--check", "--corpus", str(CORPUS), "--goldens", str(GOLDENS)]


def commands(tmp_path: Path) -> dict[str, list[str]]:
    """Each command, without ``--run`` and ``--store``."""
    return {
        "gate fit": ["gate", "fit", "--no-bank", "--out", str(tmp_path / "g.json")],
        "gate apply": ["gate", "apply", str(tmp_path / "g.json")],
        "gate export": ["gate", "export", "floor"],
        "floors presets": ["floors", "presets", "--out", str(tmp_path / "p.json")],
        "eval corpus": CHECK,
    }


def refuse_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args, **kwargs):
        raise AssertionError("a run was loaded before --run was refused")

    monkeypatch.setattr(gating, "load_run", never)


COMMANDS = ["gate fit", "gate apply", "gate export", "floors presets", "eval corpus"]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("value", ["two words", "retrieve", "retrieve:core"])
def test_a_bad_run_is_one_line_naming_the_stored_forms(
    command: str, value: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    refuse_loading(monkeypatch)
    store = tmp_path / "ws.duckdb"
    argv = commands(tmp_path)[command]
    assert main([*argv, "--run", value, "--store", str(store)]) == 1
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and f"bad run '{value}'" in error, error
    accepted = error.split("accepted: ")[1]
    assert (
        "main (the main job's" in accepted and "latest (the newest" in accepted and "retrieve" not in accepted
    )
    assert not store.exists() and not (tmp_path / "g.json").exists() and not (tmp_path / "p.json").exists()


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "gate apply"])  # apply reads its gate first
def test_a_run_the_store_lacks_is_one_line_before_any_run_loads(
    command: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    refuse_loading(monkeypatch)
    store = tmp_path / "ws.duckdb"
    Store(store).close()
    argv = commands(tmp_path)[command]
    assert main([*argv, "--run", "no-such-run", "--store", str(store)]) == 1
    error = capsys.readouterr().err.strip()
    assert "no run 'no-such-run' stored" in error and "\n" not in error
    assert "retrieve" not in error  # these commands never retrieve: the hint names only what they take
    assert main([*argv, "--store", str(store)]) == 1  # the default, latest: none stored yet
    error = capsys.readouterr().err.strip()
    assert "no retrieval run stored yet" in error and "\n" not in error


def test_main_and_latest_name_the_runs_they_mean(several_runs: dict, tmp_path: Path, capsys) -> None:
    """The store's latest run is a core run over a grown library, its main run the core,off_topic run over
    the fixture corpus: each command reads the one its value names."""
    store, runs = str(several_runs["store"]), several_runs["runs"]
    with Store(store, read_only=True) as opened:
        prints = {name: opened.get_run(run_id).fingerprint for name, run_id in runs.items()}
    argv = commands(tmp_path)
    fit = [*argv["gate fit"], "--features", "pool", "--folds", "2", "--repeats", "1", "--corpus", str(CORPUS)]
    assert main([*fit, "--run", "main", "--store", store]) == 0
    assert f"fitted on run {runs['main']}:" in capsys.readouterr().out
    assert json.loads((tmp_path / "g.json").read_text())["training"]["fingerprint"] == prints["main"]

    assert main([*argv["gate apply"], "--run", "latest", "--store", store]) == 0
    assert f"on run {runs['grown']}" in capsys.readouterr().out

    snippet = tmp_path / "floor.ts"
    assert main([*argv["gate export"], "--run", "latest", "--store", store, "--out", str(snippet)]) == 0
    text = snippet.read_text()
    assert prints["grown"] in text and "--run latest" in text and prints["main"] not in text

    assert main([*argv["floors presets"], "--store", store]) == 0  # the default: latest
    assert json.loads((tmp_path / "p.json").read_text())["runId"] == runs["grown"]
    assert main([*argv["floors presets"], "--run", "main", "--store", store]) == 1  # no main over the default
    assert "no core,off_topic run over datasets/corpus stored yet" in capsys.readouterr().err

    assert main([*CHECK, "--run", "main", "--store", store]) == 0
    assert f"ok: run {runs['main']}:" in capsys.readouterr().out
    assert main([*CHECK, "--store", store]) == 0  # the default: latest
    assert f"ok: run {runs['grown']}:" in capsys.readouterr().out
