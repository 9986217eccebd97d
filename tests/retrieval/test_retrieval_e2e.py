"""Real retrieval: real MiniLM embeddings, real DuckDB files and the real CLI, on a fixture corpus."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from nomad_lab.cli import main
from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.dump import load_dump
from nomad_lab.store import Store
from tests.support.paths import CORPUS, GOLDENS
from tests.support.retrieval import CountingJudgeBackend

pytestmark = pytest.mark.slow


def test_long_texts_are_embedded_whole(embedder) -> None:
    short = ["How do I purify water?", "hello"]
    assert np.allclose(
        embedder.embed(short), embedder.model.encode(short, normalize_embeddings=True), atol=1e-6
    )
    text = (CORPUS / "radio-handheld-basics.md").read_text()
    windows = embedder._windows([text])
    assert len(windows) >= 3 and max(len(ids) for _, ids in windows) <= embedder.window_tokens
    whole = embedder.embed([text])[0]
    truncated = embedder.model.encode([text], normalize_embeddings=True)[0]  # first 256 word pieces only
    assert abs(float(np.linalg.norm(whole)) - 1) < 1e-5
    assert float(whole @ truncated) < 0.99  # the tail of the text moved the vector


def test_chunking_is_3000_characters_with_300_overlap() -> None:
    from nomad_lab.retrieval.index import chunk_text

    text = (CORPUS / "radio-handheld-basics.md").read_text()
    pieces = chunk_text(text)
    assert len(pieces) == 2 and pieces[0] == text[:3000].strip() and pieces[1] == text[2700:].strip()
    assert chunk_text("  \n ") == []


class QueryCounter:
    """The session's embedder, counting the texts it is asked to embed as queries."""

    def __init__(self, embedder) -> None:
        self.embedder, self.queries = embedder, 0

    def embed(self, texts, progress: bool = False, desc: str = "embedding", kind: str = "document"):
        self.queries += len(texts) if kind == "query" else 0
        return self.embedder.embed(texts, progress, desc, kind)

    def __getattr__(self, name: str):
        return getattr(self.embedder, name)


def test_a_runs_query_vectors_are_stored_for_the_gates_and_the_next_run(tmp_path: Path, embedder) -> None:
    from nomad_lab.eval.gating.run_data import query_vectors
    from nomad_lab.retrieval.index import query_texts, stored_query_vectors
    from tests.support.retrieval import fixture_run

    store, counter = tmp_path / "s.duckdb", QueryCounter(embedder)
    run_id = fixture_run(store, counter)
    asked = counter.queries
    fixture_run(store, counter)  # the same suite again: every question's vector is in the store
    assert asked > 5 and counter.queries == asked
    with Store(store) as opened:
        run = opened.get_run(run_id)
        queries = [c.query for c in opened.get_cases(run_id)]
        held = stored_query_vectors(opened, counter, queries)
        assert counter.queries == asked  # read back, not embedded
        fresh = embedder.embed(query_texts(embedder, queries), kind="query")
        assert np.allclose(held, fresh, atol=1e-5)  # the vectors the run's questions have
        gated = query_vectors(opened, run.params["embedder"], queries, "run")  # what a gate reads
        assert np.array_equal(gated, held.astype(float))


def test_index_is_built_once_then_reused(tmp_path: Path, embedder) -> None:
    from nomad_lab.retrieval.index import build_index

    corpus = load_corpus(CORPUS)
    with Store(tmp_path / "s.duckdb") as store:
        index, first = build_index(corpus, store, embedder, progress=False)
        assert (first.cached_index, first.docs, first.chunks, first.embedded) == (False, 5, 6, 6)
        again, second = build_index(corpus, store, embedder, progress=False)
        assert (second.cached_index, second.embedded, second.reused) == (True, 0, 6)
        assert again.fingerprint == index.fingerprint and np.array_equal(again.matrix, index.matrix)
        lean, third = build_index(
            load_corpus(CORPUS, include_distractors=False), store, embedder, progress=False
        )
        assert lean.fingerprint != index.fingerprint
        assert (third.cached_index, third.chunks, third.embedded, third.reused) == (False, 5, 0, 5)

        result = index.search("How many drops of bleach per gallon of water?", min_final_score=0.0)
        assert result.chunks[0].doc_id == "water-bleach"
        pool = result.stages.candidates
        assert [c.final for c in pool] == sorted((c.final for c in pool), reverse=True)
        assert all(c.semantic_score >= 0.3 for c in pool) and len(pool) <= 15
        assert all(c.final >= c.semantic_score for c in pool)  # boosts only add
        floored = index.search("How many drops of bleach per gallon of water?", min_final_score=0.99)
        assert floored.chunks == [] and floored.floor.below_floor == len(floored.stages.candidates)


def test_a_moved_corpus_reuses_the_index_and_resolves_its_sources(tmp_path: Path, embedder) -> None:
    from nomad_lab.retrieval.index import build_index

    moved = tmp_path / "elsewhere"
    shutil.copytree(CORPUS, moved)
    with Store(tmp_path / "s.duckdb") as store:
        build_index(load_corpus(CORPUS), store, embedder, progress=False)
        index, stats = build_index(load_corpus(moved), store, embedder, progress=False)
    assert stats.cached_index
    assert index.search("cool a burn", min_final_score=0.0).chunks[0].doc_id == "first-aid-burns"


def test_eval_retrieval_cli_end_to_end(tmp_path: Path, embedder, capsys) -> None:
    store_path, dump, reports = tmp_path / "ws.duckdb", tmp_path / "pools.json", tmp_path / "reports"
    argv = [
        "eval",
        "retrieval",
        "--corpus",
        str(CORPUS),
        "--goldens",
        str(GOLDENS),
        "--suite",
        "core,off_topic",
        "--floor",
        "0",
        "--store",
        str(store_path),
        "--dump",
        str(dump),
        "--report",
        str(reports),
        "--no-progress",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "recall@5" in out and "nonEmptyRateOnRefusal" in out and "leaked=" in out
    assert "Leaked cases" in out  # at floor 0 a refusal leaks whenever its cosine net caught anything
    report_json = next(reports.glob("retrieval-*.json"))
    assert report_json.with_suffix(".md").is_file()
    report = json.loads(report_json.read_text())
    refusals = [c for c in report["cases"] if c["expectRefusal"]]
    leaked = sum(1 for c in refusals if c["retrievedCount"]) / len(refusals)
    assert report["meta"]["kind"] == "retrieval" and report["metrics"]["nonEmptyRateOnRefusal"] == leaked > 0
    assert report["metrics"]["recall@5"] == 1.0 and len(report["cases"]) == 9
    assert report["intervals"]["nonEmptyRateOnRefusal"]["method"] == "wilson"
    fingerprint = report["meta"]["corpusFingerprint"]

    pools = load_dump(dump)
    assert pools["fingerprint"] == fingerprint and len(pools["pools"]) == 9
    with Store(store_path, read_only=True) as store:
        run_id = store.latest_run_id("retrieval")
        assert store.get_run(run_id).params["minFinalScore"] == 0
        assert set(store.get_pools(run_id)) == {p["id"] for p in pools["pools"] if p["candidates"]}
        assert store.export_dump(run_id) == pools

    baselines = tmp_path / "baselines"
    assert (
        main(
            ["eval", "compare", str(report_json), "--baselines-dir", str(baselines), "--promote", "retrieval"]
        )
        == 0
    )
    assert (baselines / fingerprint / "retrieval.json").is_file()
    assert main(["eval", "compare", str(report_json), "--baselines-dir", str(baselines)]) == 0
    worse = dict(report, metrics={**report["metrics"], "recall@5": 0.7, "nonEmptyRateOnRefusal": 0.0})
    worse_path = tmp_path / "worse.json"
    worse_path.write_text(json.dumps(worse))
    capsys.readouterr()
    assert main(["eval", "compare", str(worse_path), "--baselines-dir", str(baselines)]) == 1
    table, paired = capsys.readouterr().out.split("Paired over the questions")  # the tolerance table first
    assert "| recall@5 | paired bootstrap |" in paired
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert rows[0].startswith("| recall@5 | 1.0000 | 0.7000 | -0.3000 | **REGRESSED** |")  # worst first
    assert rows[-1].startswith("| nonEmptyRateOnRefusal |") and rows[-1].endswith("| improved |")
    other = dict(report, meta={**report["meta"], "corpusFingerprint": "0" * 16})
    other_path = tmp_path / "other.json"
    other_path.write_text(json.dumps(other))
    assert (
        main(
            [
                "eval",
                "compare",
                str(other_path),
                "--baselines-dir",
                str(baselines),
                "--baseline",
                str(report_json),
            ]
        )
        == 1
    )
    assert (
        main(["eval", "compare", str(other_path), "--baselines-dir", str(baselines)]) == 2
    )  # no baseline yet

    # A second run at the seed's floor reuses the index (nothing embedded) and stores a second run.
    assert main([*argv[:8], "--floor", "0.62", "--store", str(store_path), "--no-progress"]) == 0
    assert "cached index" in capsys.readouterr().out
    with Store(store_path, read_only=True) as store:
        assert store.con.execute("SELECT count(*) FROM runs").fetchone()[0] == 2


def test_eval_check_cli(tmp_path: Path, capsys) -> None:
    assert main(["eval", "check", "--corpus", str(CORPUS), "--goldens", str(GOLDENS)]) == 0
    assert "ok: 9 goldens in 2 suite(s)" in capsys.readouterr().out
    bad = tmp_path / "goldens"
    bad.mkdir()
    (bad / "core.jsonl").write_text('{"id": "x", "query": "q", "relevantDocIds": ["nope"]}\n')
    assert main(["eval", "check", "--corpus", str(CORPUS), "--goldens", str(bad)]) == 1
    assert f"{bad / 'core.jsonl'}:1: relevantDocIds entry 'nope'" in capsys.readouterr().err


def test_judge_verdicts_are_cached_in_the_store(tmp_path: Path, embedder) -> None:
    from nomad_lab.eval.retrieval_eval import RetrievalEvalConfig, run_retrieval_eval

    config = RetrievalEvalConfig(
        corpus_dir=CORPUS,
        goldens_dir=GOLDENS,
        suite="off_topic",
        floor=0.0,
        judge_model="test:counting-judge",
        store_path=tmp_path / "ws.duckdb",
        progress=False,
    )
    backend = CountingJudgeBackend()
    first = run_retrieval_eval(config, embedder, judge_backend=backend)
    judged = first.report.extra["judge"]
    non_empty_before_judge = backend.calls
    assert (
        non_empty_before_judge >= 2 and judged["calls"] == non_empty_before_judge and judged["cacheHits"] == 0
    )
    assert (
        judged["rejected"] > 0 and first.aggregate.non_empty_rate_on_refusal == 0.0
    )  # the haiku was dropped
    second = run_retrieval_eval(config, embedder, judge_backend=backend)
    assert backend.calls == non_empty_before_judge  # no verdict computed twice
    assert second.report.extra["judge"]["cacheHits"] == non_empty_before_judge
    assert second.report.metrics == first.report.metrics
    assert "from cache" in second.judge_line
