"""The first-run route: one command stores what every notebook reads, and every place that finds no run
names that command in one line (never a traceback)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.core.errors import DEBUG_ENV, NomadLabError
from nomad_lab.core.first_run import FIRST_RUN_COMMAND, first_run_command, first_run_line
from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR
from tests.support.dumps import dump_of, random_records
from tests.support.paths import CORPUS, GOLDENS

COMMAND = f"`{FIRST_RUN_COMMAND}`"


def test_the_line_is_one_line_naming_the_command_and_options_only_where_they_differ(tmp_path: Path) -> None:
    line = first_run_line("x.duckdb: no store yet")
    assert line.startswith("x.duckdb: no store yet; run `nomad-lab first-run` first (")
    assert "\n" not in line and "floor 0" in line and "off-topic" in line
    assert first_run_command(DEFAULT_CORPUS_DIR) == FIRST_RUN_COMMAND
    assert first_run_command(tmp_path) == f"{FIRST_RUN_COMMAND} --corpus {tmp_path}"
    assert first_run_command(dump=tmp_path / "d.json") == f"{FIRST_RUN_COMMAND} --dump {tmp_path / 'd.json'}"


def test_a_user_error_renders_in_a_notebook_as_its_one_line_unless_debugging(monkeypatch) -> None:
    """IPython shows ``_render_traceback_``'s lines instead of the traceback; in debug mode it raises,
    which IPython answers with the full traceback."""
    monkeypatch.delenv(DEBUG_ENV, raising=False)
    assert NomadLabError("a.json: no such dump yet")._render_traceback_() == [
        "NomadLabError: a.json: no such dump yet"
    ]
    monkeypatch.setenv(DEBUG_ENV, "1")
    with pytest.raises(NotImplementedError):
        NomadLabError("x")._render_traceback_()


def _one_line(text: str) -> str:
    text = text.strip()
    assert text.count("\n") == 0 and "Traceback" not in text, text
    return text


def test_every_place_without_a_run_prints_the_same_command_in_one_line(tmp_path: Path, capsys) -> None:
    """``store runs``, a study's ``--run latest`` and ``main``, the floor sweep without its dump, explore
    and the labeller's default folder: each one line naming the first-run command."""
    from nomad_lab.store import Store
    from nomad_lab.studies.gating.explore import explorer
    from nomad_lab.studies.gating.labeller import labeller

    missing, empty = tmp_path / "none.duckdb", tmp_path / "empty.duckdb"
    Store(empty).close()
    assert main(["store", "runs", "--store", str(missing)]) == 0
    assert COMMAND in _one_line(capsys.readouterr().out)
    assert main(["store", "runs", "--store", str(empty)]) == 0
    assert COMMAND in capsys.readouterr().out.splitlines()[0]
    for store in (missing, empty):
        for run in ("latest", "main"):
            argv = [
                "study",
                "answerability",
                "--store",
                str(store),
                "--run",
                run,
                "--out",
                str(tmp_path / "o"),
            ]
            assert main(argv) == 1
            assert COMMAND in _one_line(capsys.readouterr().err)
    assert main(["sweep", "--dump", str(tmp_path / "no.json"), "--out", str(tmp_path / "s")]) == 1
    error = _one_line(capsys.readouterr().err)
    assert f"`{FIRST_RUN_COMMAND} --dump {tmp_path / 'no.json'}`" in error
    for store in (missing, empty):
        assert COMMAND in _one_line(explorer(store).data)
    shown = labeller(goldens=None, store=empty)  # the default folder, runs/label, holds no drafts here
    if not (Path(__file__).parents[2] / "runs" / "label" / "drafts.jsonl").is_file():
        assert COMMAND in _one_line(shown.data) and "runs/label/drafts.jsonl" in shown.data
    other = labeller(goldens=tmp_path / "mine", store=empty)
    assert "nomad-lab goldens draft" in _one_line(other.data) and str(tmp_path / "mine") in other.data


@pytest.fixture
def small_dump(tmp_path: Path):
    def write(off_topic: int, answerable: int = 40) -> Path:
        records = [r for r in random_records(3, 400) if not r["expectRefusal"]][:answerable]
        refusals = [r for r in random_records(4, 400) if r["expectRefusal"]][:off_topic]
        path = tmp_path / f"dump-{off_topic}.json"
        path.write_text(json.dumps(dump_of(records + [{**r, "id": f"r{r['id']}"} for r in refusals])))
        return path

    return write


def test_the_floor_sweep_refuses_a_dump_without_off_topic_refusals_and_warns_on_few(
    small_dump, tmp_path: Path, capsys
) -> None:
    argv = ["sweep", "--out", str(tmp_path / "out"), "--refusal-tag", "off-topic", "--dump"]
    assert main([*argv, str(small_dump(0))]) == 1
    error = _one_line(capsys.readouterr().err)
    assert "no off-topic refusals among its 40 questions" in error and FIRST_RUN_COMMAND in error
    assert main([*argv, str(small_dump(8))]) == 0
    printed = capsys.readouterr().out
    assert "holds only 8 off-topic refusals" in printed and FIRST_RUN_COMMAND in printed
    assert main([*argv, str(small_dump(40))]) == 0
    assert "holds only" not in capsys.readouterr().out


def test_first_run_plans_only_what_is_missing(tmp_path: Path) -> None:
    """A fresh workspace needs both steps (the main retrieval with its dump, the drafts); drafts already
    there are kept, and --force plans both again."""
    from nomad_lab.cli import build_parser
    from nomad_lab.cli.first_steps import steps

    base = ["first-run", "--store", str(tmp_path / "s.duckdb"), "--label-dir", str(tmp_path / "label")]
    parsed = build_parser().parse_args([*base, "--dump", str(tmp_path / "d.json")])
    planned = steps(parsed)
    assert [argv[:2] for _, argv in planned] == [["eval", "retrieval"], ["goldens", "draft"]]
    retrieval = planned[0][1]
    assert retrieval[retrieval.index("--suite") + 1] == "core,off_topic" and retrieval[5] == "0"
    (tmp_path / "label").mkdir()
    (tmp_path / "label" / "drafts.jsonl").write_text("")
    assert [argv[:2] for _, argv in steps(parsed)] == [["eval", "retrieval"]]
    assert len(steps(build_parser().parse_args([*base, "--force"]))) == 2


@pytest.mark.slow
def test_first_run_stores_what_explore_floor_sweep_and_label_read(tmp_path: Path, embedder, capsys) -> None:
    """The command on the fixture library: afterwards ``store runs`` marks a main run, the floor sweep
    reads the dump with no warning about missing off-topic refusals beyond its size, drafts are there,
    and a second call runs nothing."""
    store, dump, label = tmp_path / "s.duckdb", tmp_path / "d.json", tmp_path / "label"
    argv = ["first-run", "--corpus", str(CORPUS), "--goldens", str(GOLDENS), "--store", str(store)]
    argv += ["--dump", str(dump), "--label-dir", str(label)]
    assert main(argv) == 0
    assert dump.is_file() and (label / "drafts.jsonl").is_file()
    capsys.readouterr()
    assert main(["store", "runs", "--store", str(store), "--corpus", str(CORPUS)]) == 0
    assert "<- main" in capsys.readouterr().out
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("already stored")
    assert os.path.getsize(dump) > 0


@pytest.mark.slow
def test_the_floor_sweep_notebook_without_its_dump_shows_one_line_not_a_traceback(tmp_path: Path) -> None:
    """Run All on a fresh clone: the first code cell fails (so Run All and papermill stop there) and
    what it shows is the one line naming the first-run command."""
    import papermill

    from nomad_lab.runners.notebooks import as_ipynb
    from tests.support.paths import ROOT

    out = tmp_path / "floor_sweep.out.ipynb"
    with pytest.raises(papermill.PapermillExecutionError):
        papermill.execute_notebook(
            str(as_ipynb(ROOT / "notebooks" / "floor_sweep.py", tmp_path)),
            str(out),
            parameters={"dump": str(tmp_path / "none.json"), "out_dir": str(tmp_path / "o")},
            kernel_name="python3",
            cwd=str(ROOT / "notebooks"),
            progress_bar=False,
        )
    errors = [o for c in json.loads(out.read_text())["cells"] for o in c.get("outputs", [])]
    errors = [o for o in errors if o["output_type"] == "error"]
    assert len(errors) == 1 and len(errors[0]["traceback"]) == 1
    assert f"`{FIRST_RUN_COMMAND} --dump {tmp_path / 'none.json'}`" in errors[0]["traceback"][0]
