"""``nomad-lab reproduce`` records each finished step in a manifest and skips it on a rerun."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.publish import main_job as reproduce


def test_every_step_is_a_valid_command_line() -> None:
    from nomad_lab.cli import build_parser

    parser = build_parser()
    steps = reproduce.steps()
    for _, argv in steps:
        assert callable(parser.parse_args(argv).func)
    lines = [" ".join(argv) for _, argv in steps]
    # every published study of the registry is a step, after the dump the floor sweep reads
    assert lines.index(
        "sweep --dump runs/dumps/core-off_topic.json --refusal-tag off-topic --alpha 0.05 "
        "--out results/floor_sweep"
    ) > lines.index(
        "eval retrieval --suite core,off_topic --floor 0.62 --dump runs/dumps/core-off_topic.json"
    )
    assert "study placement" in lines and "study growth" in lines and "study injection" not in " ".join(lines)
    assert lines.index("study placement") < lines.index(
        "sweep placement -p out_dir results/placement --rerun --cell-timeout 300"
    )
    # notebooks that read stored results get a short cell timeout (a lost kernel reply retries in
    # minutes); the judge notebook, which calls models, keeps its hour
    assert "sweep judge_models -p out_dir results/judges --rerun --cell-timeout 3600" in lines
    notebooks = [line for line in lines if "--cell-timeout" in line and "judge_models" not in line]
    assert len(notebooks) == 4 and all(line.endswith("--cell-timeout 300") for line in notebooks)


@pytest.fixture
def one_step_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project root in tmp whose reproduce has the one cheap step ``eval check``."""
    monkeypatch.setattr("nomad_lab.core.workspace.PROJECT_ROOT", tmp_path)
    monkeypatch.setattr("nomad_lab.core.workspace.DEFAULT_STORE_PATH", tmp_path / "none.duckdb")
    monkeypatch.setattr(reproduce, "STEPS", [("validate", ["eval", "check"])])
    monkeypatch.setattr(reproduce, "uncommitted", lambda: [])
    return tmp_path


def test_a_rerun_skips_done_steps_and_force_reruns_them(
    one_step_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path = one_step_project
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.gguf").write_bytes(b"GGUF model bytes")
    assert main(["reproduce"]) == 0
    manifest = json.loads((tmp_path / "results" / "manifest.json").read_text())
    assert manifest["models"] == {"m.gguf": 16}
    assert manifest["model_sha256"] == {"m.gguf": hashlib.sha256(b"GGUF model bytes").hexdigest()}
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


def test_a_dirty_tree_is_refused_unless_allowed_and_the_manifest_says_so(
    one_step_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(reproduce, "uncommitted", lambda: [" M nomad_lab/core/judge_prompt.py"])
    assert main(["reproduce"]) == 1
    err = capsys.readouterr().err
    assert "refusing to publish from a dirty tree (1 uncommitted: M nomad_lab/core/judge_prompt.py)" in err
    assert "--allow-dirty" in err
    assert not (one_step_project / "results" / "manifest.json").exists()
    assert main(["reproduce", "--allow-dirty"]) == 0
    step = json.loads((one_step_project / "results" / "manifest.json").read_text())["steps"][
        "nomad-lab eval check"
    ]
    assert step["dirty"] is True
    manifest = json.loads((one_step_project / "results" / "manifest.json").read_text())
    assert manifest["git"]["gitDirty"] is True
    monkeypatch.setattr(reproduce, "uncommitted", lambda: [])  # only results/ changed: not dirty
    assert main(["reproduce", "--force"]) == 0
    manifest = json.loads((one_step_project / "results" / "manifest.json").read_text())
    assert manifest["git"]["gitDirty"] is False
    monkeypatch.setattr(reproduce, "uncommitted", lambda: None)
    assert main(["reproduce", "--force"]) == 1
    assert "cannot tell whether the tree is clean" in capsys.readouterr().err


def test_each_step_records_its_commit_corpora_and_time_and_the_gallery_is_written(
    one_step_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nomad_lab.eval.provenance import run_git

    store = one_step_project / "store.duckdb"
    monkeypatch.setattr("nomad_lab.core.workspace.DEFAULT_STORE_PATH", store)
    monkeypatch.setattr(
        reproduce, "STEPS", [("validate", ["eval", "check"]), ("core", ["eval", "retrieval"])]
    )
    stored: list[str] = []

    def retrieval(args: object) -> int:  # a step that stores one retrieval run, as eval retrieval does
        from nomad_lab.store import RunRecord, Store

        with Store(store) as opened:
            opened.put_run(RunRecord(kind="retrieval", fingerprint="ab" * 8, params={}, run_id="r1"), [], {})
        stored.append("r1")
        return 0

    import nomad_lab.cli.eval_retrieval as eval_retrieval

    monkeypatch.setattr(eval_retrieval, "run", retrieval)
    assert main(["reproduce"]) == 0
    manifest = json.loads((one_step_project / "results" / "manifest.json").read_text())
    check, core = manifest["steps"]["nomad-lab eval check"], manifest["steps"]["nomad-lab eval retrieval"]
    assert stored == ["r1"] and core["fingerprints"] == ["ab" * 8] and check["fingerprints"] == []
    assert core["commit"] == run_git("rev-parse", "HEAD") and core["dirty"] is False
    assert core["argv"] == ["nomad-lab", "eval", "retrieval"]  # the step's own provenance record
    assert manifest["fingerprint"] == "ab" * 8
    assert manifest["total_seconds"] == pytest.approx(check["seconds"] + core["seconds"], abs=0.11)
    page = (one_step_project / "results" / "index.html").read_text()
    assert "<code>nomad-lab study placement</code>" in page  # a study this job does not run names its command
    assert "made by its own command" in page and "abababababababab" in page


def test_from_and_to_run_just_the_steps_between(
    one_step_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nomad_lab.cli.eval_check as eval_check
    import nomad_lab.cli.eval_retrieval as eval_retrieval

    ran: list[str] = []
    monkeypatch.setattr(eval_check, "run", lambda args: ran.append("check") or 0)
    monkeypatch.setattr(eval_retrieval, "run", lambda args: ran.append("retrieval") or 0)
    monkeypatch.setattr(
        reproduce, "STEPS", [("validate", ["eval", "check"]), ("core", ["eval", "retrieval"])]
    )
    assert main(["reproduce", "--to", "1"]) == 0 and ran == ["check"]
    assert main(["reproduce", "--from", "2", "--to", "2", "--force"]) == 0 and ran == ["check", "retrieval"]
    steps = json.loads((one_step_project / "results" / "manifest.json").read_text())["steps"]
    assert set(steps) == {"nomad-lab eval check", "nomad-lab eval retrieval"}


def test_each_step_records_the_model_work_it_did_even_in_other_processes(
    one_step_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Calls and prefilled tokens come from the step's work log, which child processes append to."""
    import subprocess
    import sys

    import nomad_lab.cli.eval_check as eval_check

    def working(args: object) -> int:
        child = "from nomad_lab.backends.work_log import note_prefill; note_prefill('m', 700)"
        subprocess.run([sys.executable, "-c", child], check=True)  # inherits the step's log
        from nomad_lab.backends.work_log import note_prefill

        note_prefill("m", 42)
        return 0

    monkeypatch.setattr(eval_check, "run", working)
    assert main(["reproduce"]) == 0
    manifest = json.loads((one_step_project / "results" / "manifest.json").read_text())
    step = manifest["steps"]["nomad-lab eval check"]
    assert (step["model_calls"], step["prefilled_tokens"]) == (2, 742)
    assert (manifest["total_model_calls"], manifest["total_prefilled_tokens"]) == (2, 742)
    assert "AVX" in manifest["llama_cpp_build"]


def test_the_job_re_renders_the_figures_the_readme_quotes_before_the_gallery(
    one_step_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = one_step_project / "results"
    results.mkdir()
    (results / "r.json").write_text('{"leak": 0.0172}')
    (one_step_project / "README.md").write_text(
        "# x\n\n## What it found\n\n| study | found |\n|---|---|\n"
        "| r | leak <!-- fig results/r.json#leak fmt=.3f -->0.009<!-- /fig --> |\n"
    )
    assert main(["reproduce", "--gallery-only"]) == 0
    assert "-->0.017<!-- /fig -->" in (one_step_project / "README.md").read_text()
    assert "docs: README.md: differs from its stored results" in capsys.readouterr().out
    assert "leak 0.017" in (results / "index.html").read_text()  # the gallery reads the rendered table
    (one_step_project / "README.md").write_text("<!-- fig results/gone.json#leak -->1<!-- /fig -->\n")
    assert main(["reproduce", "--gallery-only"]) == 1
    assert "README.md:1: results/gone.json: no such file" in capsys.readouterr().err


def test_a_step_s_own_record_names_its_command_and_the_model_it_opened_not_the_outer_job(
    one_step_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nomad_lab.backends.work_log import note_use
    from nomad_lab.eval.provenance import provenance_record, read_provenance, write_provenance

    gguf = one_step_project / "m.gguf"
    gguf.write_bytes(b"GGUF model bytes")
    monkeypatch.setattr(reproduce, "STEPS", [("a study that calls a model", ["eval", "check"])])
    monkeypatch.setattr("sys.argv", ["/x/.venv/bin/nomad-lab", "reproduce", "--from", "1"])

    def study(args: object) -> int:  # opens a model and writes its folder's record, as a study does
        note_use("models", "embedded:m", str(gguf))
        write_provenance(one_step_project / "results" / "probe", provenance_record())
        return 0

    import nomad_lab.cli.eval_check as eval_check

    monkeypatch.setattr(eval_check, "run", study)
    assert main(["reproduce", "--from", "1"]) == 0
    record = read_provenance(one_step_project / "results" / "probe")
    assert record is not None and record["argv"] == ["nomad-lab", "eval", "check"]
    digest = hashlib.sha256(b"GGUF model bytes").hexdigest()
    assert record["models"] == {"embedded:m": digest}
    step = json.loads((one_step_project / "results" / "manifest.json").read_text())["steps"][
        "nomad-lab eval check"
    ]
    assert step["argv"] == ["nomad-lab", "eval", "check"] and step["models"] == {"embedded:m": digest}


def test_the_committed_caches_the_main_job_imports_are_there_and_valid() -> None:
    from nomad_lab.core.workspace import PROJECT_ROOT
    from nomad_lab.store.cache_files import read_cache_file

    imports = [argv for _, argv in reproduce.BEFORE_STUDIES if argv[:2] == ["store", "import-cache"]]
    assert imports and imports[0][2:] == list(reproduce.CACHES)
    tables = {read_cache_file(PROJECT_ROOT / path).table for path in reproduce.CACHES}
    assert tables == {"pair_scores", "judge_verdicts"}
