"""``nomad-lab store calls``: the call log's totals and latest calls, read without changing the store."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.store import ModelCall, Store


def test_store_calls_lists_totals_and_the_latest_calls(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "ws.duckdb"
    with Store(path) as store:
        store.record_call(ModelCall("gemma3-270m", "judge", "a" * 64, 300, 7, 40.0))
        store.record_call(ModelCall("gemma3-270m", "judge", "b" * 64, None, None, 10.0, "http-500"))
        store.record_call(ModelCall("smollm2", "answer", "c" * 64, 900, 50, 200.0))
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert main(["store", "calls", "--store", str(path), "--limit", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "gemma3-270m · judge · 2 · 1 · 300 · 7 · 25 · 40" in out
    assert "smollm2 · answer · 1 · 0 · 900 · 50 · 200 · 200" in out
    listed = [line for line in out if " bbbbbbbbbbbb " in line or " cccccccccccc " in line]
    assert len(listed) == 2 and not any(" aaaaaaaaaaaa " in line for line in out)  # --limit 2: the latest
    assert listed[0].endswith("failed: http-500") and "prompt=900 completion=50" in listed[1]
    assert main(["store", "calls", "--store", str(path), "--purpose", "answer"]) == 0
    assert sum(" smollm2 answer " in line for line in capsys.readouterr().out.splitlines()) == 1
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_store_calls_on_an_empty_store(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "ws.duckdb"
    Store(path).close()
    assert main(["store", "calls", "--store", str(path)]) == 0
    assert capsys.readouterr().out.strip() == "no model calls logged"
