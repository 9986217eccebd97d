"""The before/after window table: hybrids get a larger window, dense models exactly the same."""

from __future__ import annotations

from pathlib import Path

from nomad_lab.cli import main
from nomad_lab.studies.budgeting.kv_window import HYBRID_SHAPES, table

DENSE = {
    "general.architecture": "llama",
    "llama.block_count": 32,
    "llama.context_length": 8192,
    "llama.attention.head_count": 32,
    "llama.attention.head_count_kv": 8,
    "llama.embedding_length": 4096,
}


def test_hybrids_are_charged_less_and_dense_models_the_same() -> None:
    rows = {r.model: r for r in table(16, 4, {"dense": DENSE})}
    for name in HYBRID_SHAPES:
        assert rows[name].kv_after < rows[name].kv_before
        assert rows[name].window_after >= rows[name].window_before
    assert rows["dense"].kv_before == rows["dense"].kv_after == 2 * 32 * 8 * 128 * 2
    assert rows["dense"].window_before == rows["dense"].window_after == 8192


def test_the_study_writes_the_table_with_the_local_models(tmp_path: Path, capsys) -> None:
    argv = ["study", "kv-window", "--available-gib", "16", "--model-gib", "4", "--out", str(tmp_path)]
    assert main([*argv, "--store", str(tmp_path / "s.duckdb")]) == 0
    text = (tmp_path / "table.md").read_text()
    assert text in capsys.readouterr().out
    assert "local dense" in text and "extra entries ignored" in text
