"""Cache files: model-output caches carried to another store, checked before anything is written."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.store import Store, Verdict, pair_sha256
from nomad_lab.store.cache_files import CacheFileError, read_cache_file


def _write(path: Path, lines: list) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_pair_scores_and_verdicts_travel_between_stores(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    a, b = pair_sha256("q", "one"), pair_sha256("q", "two")
    source = tmp_path / "source.duckdb"
    with Store(source) as store:
        store.put_pair_scores("model-x", [(a, 1.5, 2.0), (b, -7.25, None)])
        store.put_pair_scores("model-y", [(a, 9.0, 1.0)])
        store.put_verdict("judge-1", "f" * 64, Verdict(False, True, "off topic", 812.0, 301, 0.25, None))
    scores, verdicts = tmp_path / "scores.jsonl.gz", tmp_path / "verdicts.jsonl.gz"
    args = ["store", "export-cache", "pair_scores", "--key", "model-x", "--out", str(scores)]
    assert main([*args, "--store", str(source)]) == 0
    assert (
        main(["store", "export-cache", "judge_verdicts", "--out", str(verdicts), "--store", str(source)]) == 0
    )
    first = scores.read_bytes()
    record = json.loads((tmp_path / "provenance.json").read_text())["files"]["scores.jsonl.gz"]
    assert record["argv"][:3] == ["nomad-lab", "store", "export-cache"] and "model-x" in record["argv"]
    assert main([*args, "--store", str(source)]) == 0
    assert scores.read_bytes() == first  # same rows, same bytes: a committed file changes only with its rows

    target = tmp_path / "target.duckdb"
    with Store(target) as store:
        store.put_pair_scores("model-x", [(a, 4.0, 3.0)])  # already held: kept as it is
    assert main(["store", "import-cache", str(scores), str(verdicts), "--store", str(target)]) == 0
    out = capsys.readouterr().out
    assert "1 of 2 pair_scores rows were new" in out and "1 of 1 judge_verdicts rows were new" in out
    with Store(target, read_only=True) as store:
        assert store.get_pair_scores("model-x", [a, b]) == {a: (4.0, 3.0), b: (-7.25, None)}
        assert store.get_pair_scores("model-y", [a]) == {}  # not exported: --key model-x
        assert store.get_verdict("judge-1", "f" * 64) == Verdict(
            False, True, "off topic", 812.0, 301, 0.25, None
        )


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{"table": "pair_scores", "rows": 0}], ":1: the header must be"),
        ([{"nomadLabCache": 1, "table": "answers", "rows": 0}], ":1: field 'table' must be one of"),
        ([{"nomadLabCache": 1, "table": "pair_scores", "rows": 2}], ":1: the header counts 2 rows"),
        (
            [{"nomadLabCache": 1, "table": "pair_scores", "rows": 1}, {"scorer": "m", "pair_sha256": "x"}],
            ":2: field 'score' is required",
        ),
        (
            [
                {"nomadLabCache": 1, "table": "pair_scores", "rows": 1},
                {"scorer": "m", "pair_sha256": "x", "score": "1"},
            ],
            ":2: field 'score' must be float",
        ),
        (
            [
                {"nomadLabCache": 1, "table": "judge_verdicts", "rows": 1},
                {"model": "m", "input_sha256": "x", "ok": 1},
            ],
            ":2: field 'ok' must be bool",
        ),
        (
            [
                {"nomadLabCache": 1, "table": "pair_scores", "rows": 1},
                {"scorer": "m", "pair_sha256": "x", "score": 1.0, "extra": 1},
            ],
            ":2: unknown field(s) extra",
        ),
    ],
)
def test_a_bad_cache_file_is_named_by_line_and_field(tmp_path: Path, lines: list, message: str) -> None:
    path = _write(tmp_path / "bad.jsonl.gz", lines)
    with pytest.raises(CacheFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_cache_file(path)


def test_a_broken_file_leaves_the_store_unopened(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    good = _write(tmp_path / "good.jsonl.gz", [{"nomadLabCache": 1, "table": "pair_scores", "rows": 0}])
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(b"not gzip")
    store = tmp_path / "never.duckdb"
    assert main(["store", "import-cache", str(good), str(broken), "--store", str(store)]) != 0
    assert "broken.jsonl.gz: not a gzip-compressed JSON lines cache file" in capsys.readouterr().err
    assert not store.exists()
