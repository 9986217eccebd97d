"""Commands that write their own files still leave the one provenance record beside them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from nomad_lab.cli.recorded import recorded
from nomad_lab.eval.provenance import git_state
from nomad_lab.store import RunRecord, Store


def test_a_recorded_command_writes_provenance_into_its_out_folder_only_when_it_succeeds(
    tmp_path: Path,
) -> None:
    store = tmp_path / "s.duckdb"

    @recorded
    def ok(args: argparse.Namespace) -> int:  # stores a retrieval run, as the judge studies do
        with Store(store) as opened:
            opened.put_run(RunRecord(kind="retrieval", fingerprint="ab" * 8, params={}, run_id="r2"), [], {})
        return 0

    @recorded
    def fails(args: argparse.Namespace) -> int:
        return 3

    out = tmp_path / "ladder"
    args = argparse.Namespace(
        out=out, store=store, run=None, judge_model=["embedded:/nowhere/x.gguf"], func=ok
    )
    assert ok(args) == 0
    record = json.loads((out / "provenance.json").read_text())
    assert record["commit"] == git_state()["gitSha"] and record["fingerprints"] == ["ab" * 8]
    assert record["models"]["embedded:/nowhere/x.gguf"].startswith("unknown")
    table = tmp_path / "kv" / "table.md"
    assert fails(argparse.Namespace(out=table, store=None, func=fails)) == 3
    assert not (tmp_path / "kv").exists()
