"""``eval corpus --check``: a stored run that retrieved anything from outside the eval corpus fails."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.store import Store
from tests.support.dumps import GOOD_DUMP
from tests.support.paths import CORPUS, GOLDENS


def run_check(tmp_path: Path, dump: dict) -> int:
    store = tmp_path / "s.duckdb"
    with Store(store) as s:
        s.import_dump(dump)
    return main(["eval", "corpus", "--check", "--corpus", str(CORPUS), "--goldens", str(GOLDENS),
                 "--store", str(store)])  # fmt: skip


def test_a_run_inside_the_corpus_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = copy.deepcopy(GOOD_DUMP)
    dump["pools"][0]["candidates"] = dump["pools"][0]["candidates"][:1]  # water-boiling only
    assert run_check(tmp_path, dump) == 0
    assert "all 1 retrieved candidates come from the eval corpus" in capsys.readouterr().out


def test_any_chunk_outside_the_corpus_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = copy.deepcopy(GOOD_DUMP)
    dump["pools"][0]["candidates"].append({"docId": "tax-law", "score": 0.4, "semanticScore": 0.3})
    assert run_check(tmp_path, dump) == 1
    err = capsys.readouterr().err
    assert "2 of 3 retrieved candidates are outside the eval corpus" in err
    assert "boil rank 2: its source is not a markdown file inside the corpus directory" in err
    assert "boil rank 3: doc 'tax-law' is not in" in err
