"""``nomad-lab eval generation`` end to end: the real CLI, real retrieval over the fixture corpus, the mock
model and a scripted one; resume after a ``--limit`` run and after an interruption; long_context eviction."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from nomad_lab.backends import BackendError
from nomad_lab.cli import main
from nomad_lab.core.generation_metrics import BUDGET_FIELDS, GENERATION_METRIC_NAMES
from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR
from nomad_lab.eval.generation import WARMUP_PROMPT, GenerationEvalConfig, run_generation_eval
from nomad_lab.store import Store
from tests.support.paths import FIXTURES
from tests.support.scripted_backend import ScriptedBackend

pytestmark = pytest.mark.slow  # MiniLM embeds the fixture index and keys the corpus fingerprint

CORPUS, GOLDENS = FIXTURES / "retrieval" / "corpus", FIXTURES / "generation" / "goldens"


def cli(store: Path, *extra: str) -> list[str]:
    return [
        "eval",
        "generation",
        "--model",
        "mock",
        "--corpus",
        str(CORPUS),
        "--goldens",
        str(GOLDENS),
        "--store",
        str(store),
        "--no-progress",
        *extra,
    ]


def test_mock_cli_resumes_a_limited_run_and_writes_a_comparable_report(tmp_path: Path, capsys) -> None:
    store, reports, baselines = tmp_path / "ws.duckdb", tmp_path / "reports", tmp_path / "baselines"
    assert main(cli(store, "--limit", "2", "--repeats", "2")) == 0
    assert "answers: 4 computed, 0 from the store" in capsys.readouterr().out
    assert main(cli(store, "--repeats", "2", "--report", str(reports))) == 0
    out = capsys.readouterr().out
    assert "answers: 2 computed, 4 from the store" in out  # only the missing golden was computed
    assert "Mock model: answers are the injected context" in out and "=== E2E" in out

    report_path = next(reports.glob("generation-*.json"))
    assert report_path.with_suffix(".md").is_file()
    report = json.loads(report_path.read_text())
    meta, params = report["meta"], report["meta"]["params"]
    assert meta["kind"] == "generation" and len(meta["corpusFingerprint"]) == 16
    assert (params["mode"], params["minFinalScore"], params["relevanceCheckModel"], params["seed"]) == (
        "e2e",
        0.62,
        None,
        42,
    )
    assert tuple(report["metrics"]) == GENERATION_METRIC_NAMES
    cases = {c["id"]: c for c in report["cases"]}
    assert set(cases) == {"boil-altitude", "bleach-follow-up", "refuse-moon"}
    for case in cases.values():
        assert set(case["budget"]) == set(BUDGET_FIELDS) and case["promptTokenError"] is None  # no usage
        assert case["correctness"]["repeats"] == 2 and len(case["answers"]) == 2
    assert cases["boil-altitude"]["retrievedDocIds"][0] == "water-boiling"
    assert cases["boil-altitude"]["correctness"]["passRate"] == 1.0  # the text says "three\nminutes"
    assert cases["refuse-moon"]["answers"][0] == "I don't have information about that."
    assert cases["refuse-moon"]["refusalCorrectness"]["passRate"] == 1.0

    with Store(store, read_only=True) as db:
        kinds = db.con.execute("SELECT kind, count(*) FROM runs GROUP BY kind").fetchall()
        assert kinds == [("generation", 2)]
        assert db.con.execute("SELECT count(*) FROM generation_answers").fetchone()[0] == 6
        run_id = db.latest_run_id("generation")
        assert db.get_run(run_id).params["repeats"] == 2 and len(db.get_cases(run_id)) == 3

    promote = ["eval", "compare", str(report_path), "--baselines-dir", str(baselines)]
    assert main([*promote, "--promote", "generation-e2e"]) == 0
    assert main([*promote, "--name", "generation-e2e"]) == 0
    assert "within tolerance" in capsys.readouterr().out


def test_all_modes_print_the_decomposition(tmp_path: Path, capsys) -> None:
    assert main(cli(tmp_path / "ws.duckdb", "--all-modes", "--repeats", "1")) == 0
    out = capsys.readouterr().out
    for block in ("=== ORACLE", "=== E2E", "=== NORETRIEVAL", "=== Decomposition ===", "VERDICT"):
        assert block in out
    assert "model ceiling    1.000" in out  # the mock with the relevant documents answers everything
    assert "RAG contribution" in out and "retrieval cost" in out


def scripted_config(tmp_path: Path, **overrides) -> GenerationEvalConfig:
    return GenerationEvalConfig(
        **{
            "model": "ollama://127.0.0.1:9/scripted",  # keys the stored answers; the backend is passed in
            "corpus_dir": CORPUS,
            "goldens_dir": GOLDENS,
            "store_path": tmp_path / "ws.duckdb",
            "repeats": 2,
            "progress": False,
            **overrides,
        }
    )


def test_an_interrupted_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    # calls: 1 warm-up, 2–3 boil-altitude × 2, 4 = the follow-up's rewrite → Ctrl-C
    dying = ScriptedBackend(fail=lambda request, n: KeyboardInterrupt() if n == 4 else None)
    with pytest.raises(KeyboardInterrupt):
        run_generation_eval(scripted_config(tmp_path), backend=dying)
    good = ScriptedBackend(answer=lambda request: "Boil for three minutes, then add 8 drops per gallon.")
    result = run_generation_eval(scripted_config(tmp_path), backend=good)
    mode = result.modes[0]
    assert (mode.computed, mode.cached) == (4, 2)
    assert good.requests[0].messages == [{"role": "user", "content": WARMUP_PROMPT}]
    sent = good.chat_requests[-1].options
    assert (sent.seed, sent.temperature, sent.num_ctx) == (42, 0.0, 8192)
    for case in mode.cases:
        assert case.prompt_token_error == pytest.approx(0.2, abs=0.01)  # the scripted model counts 1.25×
    cases = {c.id: c for c in mode.cases}
    assert (
        cases["bleach-follow-up"].extra["didRewrite"] and cases["bleach-follow-up"].correctness.pass_rate == 1
    )
    assert cases["boil-altitude"].correctness.pass_rate == 0.0  # its answers were stored by the first run
    assert mode.aggregate.prompt_token_error["mean"] == pytest.approx(0.2, abs=0.01)
    untouchable = ScriptedBackend(fail=lambda request, n: AssertionError("a stored run calls no model"))
    stored = run_generation_eval(scripted_config(tmp_path), backend=untouchable).modes[0]
    assert (stored.computed, stored.cached, untouchable.requests) == (0, 6, [])
    assert stored.aggregate.metrics() == mode.aggregate.metrics()


def test_errors_are_counted_stop_the_case_and_are_retried_next_time(tmp_path: Path) -> None:
    def timeout_on_the_moon(request, n):
        return BackendError("timeout") if "Moon" in request.messages[-1]["content"] else None

    flaky = ScriptedBackend(fail=timeout_on_the_moon)
    result = run_generation_eval(scripted_config(tmp_path), backend=flaky)
    moon = next(c for c in result.modes[0].cases if c.id == "refuse-moon")
    assert result.errors == 1 and moon.error == "BackendError: timeout" and moon.scores == []
    assert sum(1 for r in flaky.chat_requests if "Moon" in r.messages[-1]["content"]) == 1  # repeats stopped
    again = run_generation_eval(scripted_config(tmp_path), backend=ScriptedBackend())
    assert (again.errors, again.modes[0].computed, again.modes[0].cached) == (0, 2, 4)


def test_long_context_runs_through_the_planner_at_a_small_window(tmp_path: Path) -> None:
    """At 4096 tokens the eviction conversations (~6–7k tokens) lose whole turns in blocks of 4 and the
    retention ones (<1k) keep everything; at 32768 nothing is elided."""
    config = GenerationEvalConfig(
        model="mock",
        suite="long_context",
        modes=("noretrieval",),
        repeats=1,
        corpus_dir=DEFAULT_CORPUS_DIR,
        goldens_dir=DEFAULT_GOLDENS_DIR,
        store_path=tmp_path / "ws.duckdb",
        progress=False,
    )
    mode = run_generation_eval(config).modes[0]
    assert len(mode.cases) == 14
    for case in mode.cases:
        evicting = "eviction" in case.tags
        assert case.budget["contextWindow"] == 4096
        assert case.budget["historyElided"] is evicting, case.id
        assert case.budget["turnsDropped"] % 4 == 0 and (case.budget["turnsDropped"] > 0) is evicting
    assert mode.aggregate.history_elided_rate == 0.5
    assert mode.report.metrics["historyElidedRate"] == 0.5
    wide = run_generation_eval(dataclasses.replace(config, context_window=32768))
    assert wide.modes[0].aggregate.history_elided_rate == 0.0


def test_bad_input_is_reported_with_its_location(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "goldens"
    bad.mkdir()
    (bad / "core.jsonl").write_text(
        '{"id": "x", "query": "q", "relevantDocIds": ["water-boiling"]}\n{"id": 1}\n'
    )
    argv = cli(tmp_path / "ws.duckdb")
    argv[argv.index(str(GOLDENS))] = str(bad)
    assert main(argv) == 1
    assert f"{bad / 'core.jsonl'}:2: field 'id' is required" in capsys.readouterr().err
    assert main(cli(tmp_path / "ws.duckdb", "--tag", "nope")) == 1
    assert "no goldens matched" in capsys.readouterr().err
    unreachable = cli(tmp_path / "ws.duckdb", "--repeats", "1")
    unreachable[unreachable.index("mock")] = "ollama://127.0.0.1:9/nothing"  # a closed port
    assert main(unreachable) == 1
    err = capsys.readouterr().err
    assert err.startswith("nomad-lab: error: warm-up chat with 'nothing' failed")
    with pytest.raises(ValueError, match="unknown mode"):
        GenerationEvalConfig(modes=("nope",))


def test_the_index_searched_keys_the_answers_and_a_bad_spec_is_refused_before_any_work(
    tmp_path: Path, capsys
) -> None:
    store = tmp_path / "ws.duckdb"
    assert main(cli(store, "--limit", "1", "--repeats", "1")) == 0
    assert main(cli(store, "--limit", "1", "--repeats", "1", "--index", "qdrant")) == 0
    assert "answers: 1 computed, 0 from the store" in capsys.readouterr().out  # not exact's answer
    with Store(store, read_only=True) as db:
        params = [db.get_run(r).params for r in db.run_ids("generation")]
    assert sorted(str(p.get("index", {}).get("kind")) for p in params) == ["None", "qdrant"]
    refused = tmp_path / "refused.duckdb"
    assert main(cli(refused, "--index", "hnsw?m=x")) == 1
    assert "hnsw option m must be an integer" in capsys.readouterr().err and not refused.exists()
    assert GenerationEvalConfig().index_params() == {}  # exact search: the old resume keys
