"""``nomad-lab reproduce`` records each finished step in a manifest and skips it on a rerun."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nomad_lab.cli import main, reproduce


def test_every_step_is_a_valid_command_line() -> None:
    from nomad_lab.cli import build_parser

    parser = build_parser()
    for _, argv in reproduce.STEPS:
        assert callable(parser.parse_args(argv).func)


@pytest.fixture
def one_step_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project root in tmp whose reproduce has the one cheap step ``eval check``."""
    monkeypatch.setattr("nomad_lab.core.workspace.PROJECT_ROOT", tmp_path)
    monkeypatch.setattr("nomad_lab.core.workspace.DEFAULT_STORE_PATH", tmp_path / "none.duckdb")
    monkeypatch.setattr(reproduce, "STEPS", [("validate", ["eval", "check"])])
    return tmp_path


def test_a_rerun_skips_done_steps_and_force_reruns_them(
    one_step_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path = one_step_project
    assert main(["reproduce"]) == 0
    manifest = json.loads((tmp_path / "results" / "manifest.json").read_text())
    step = manifest["steps"]["nomad-lab eval check"]
    assert step["step"] == 1 and step["seconds"] >= 0 and len(step["key"]) == 16
    assert manifest["git"]["gitSha"] and "duckdb" in manifest["versions"]
    capsys.readouterr()

    assert main(["reproduce"]) == 0
    assert "done before, same code and data" in capsys.readouterr().out
    assert main(["reproduce", "--force"]) == 0
    assert "$ nomad-lab eval check" in capsys.readouterr().out


def test_an_interrupted_step_exits_130_and_says_how_to_go_on(
    one_step_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path = one_step_project

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    import nomad_lab.cli.eval_check as eval_check

    assert main(["reproduce"]) == 0
    monkeypatch.setattr(eval_check, "run", interrupted)
    capsys.readouterr()
    assert main(["reproduce", "--force"]) == 130
    assert "interrupted in step 1" in capsys.readouterr().err
    steps = json.loads((tmp_path / "results" / "manifest.json").read_text())["steps"]
    assert "nomad-lab eval check" in steps  # the earlier finished step is kept
