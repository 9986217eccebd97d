"""Retrieval as a service: the stored run is the product, the report only reads it.

Real MiniLM embeddings and a real DuckDB file over the fixture corpus. What a study gets from
``retrieve`` (a run id) and what ``eval retrieval`` prints must describe the same stored rows.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.eval.retrieval_eval import RetrievalEvalConfig, run_retrieval_eval
from nomad_lab.eval.retrieval_report import retrieval_report
from nomad_lab.eval.retrieval_service import RetrievalRequest, retrieve
from nomad_lab.store import Store
from tests.support.paths import CORPUS, GOLDENS


def _request(store: Path, **extra: object) -> RetrievalRequest:
    return RetrievalRequest(
        corpus_dir=CORPUS, goldens_dir=GOLDENS, suite="core,off_topic", floor=0.3, store_path=store,
        progress=False, **extra,
    )  # fmt: skip


def _same(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12)
    )


@pytest.mark.slow
def test_the_report_is_a_view_of_the_stored_run(tmp_path: Path, embedder) -> None:
    run = retrieve(_request(tmp_path / "ws.duckdb"), embedder)
    report = retrieval_report(run).report
    with Store(tmp_path / "ws.duckdb", read_only=True) as store:
        stored = store.get_run(run.run_id)
        cases = store.get_cases(run.run_id)
        rows = {
            (scope, name): (value, low, high)
            for scope, name, value, low, high, _ in store.get_run_metrics(run.run_id)
        }
        pools = store.get_pools(run.run_id)
    assert report.meta["runId"] == run.run_id and report.meta["params"] == stored.params
    assert report.meta["corpusFingerprint"] == stored.fingerprint and stored.params["minFinalScore"] == 0.3
    assert report.cases == [c.result for c in cases] and len(cases) == 9
    assert {name for scope, name in rows if scope == "all"} == set(report.metrics)
    for name, value in report.metrics.items():
        interval = report.extra["intervals"][name]
        low, high = (None, None) if interval is None else (interval["low"], interval["high"])
        assert all(map(_same, rows[("all", name)], (value, low, high))), name
    for tag, metrics in report.by_tag.items():
        assert all(_same(rows[(f"tag:{tag}", name)][0], value) for name, value in metrics.items()), tag
    leaked = {leak["id"] for leak in report.extra["leaked"]}
    assert leaked == {c.golden_id for c in cases if c.expect_refusal and c.result["retrievedCount"]}
    assert leaked  # at floor 0.3 an off-topic question still reaches a document
    assert set(pools) <= {c.golden_id for c in cases}  # every stored pool belongs to a stored case
    refusals = [c for c in cases if c.expect_refusal]  # the fixture's refusals are all off topic
    assert report.extra["byKindCounts"] == {"off-topic": len(refusals)}
    leak = sum(1 for c in refusals if c.result["retrievedCount"]) / len(refusals)
    assert report.extra["byKind"]["off-topic"]["nonEmptyRateOnRefusal"] == pytest.approx(leak)


@pytest.mark.slow
def test_eval_retrieval_is_the_service_plus_the_report(tmp_path: Path, embedder) -> None:
    config = RetrievalEvalConfig(**vars(_request(tmp_path / "ws.duckdb")), dump_path=tmp_path / "pools.json")
    result = run_retrieval_eval(config, embedder)
    again = retrieval_report(retrieve(_request(tmp_path / "ws.duckdb"), embedder))
    assert again.run_id != result.run_id  # the service stores a new run each time
    assert again.report.metrics == result.report.metrics and again.report.cases == result.report.cases
    assert again.report.extra["intervals"] == result.report.extra["intervals"]
    assert again.report.extra["index"]["cachedIndex"] and again.build.embedded == 0
    assert result.dump_path == tmp_path / "pools.json" and result.dump_path.is_file()


@pytest.mark.parametrize(("field", "value"), [("floor", 1.5), ("floor", float("nan")), ("top_k", 0)])
def test_a_bad_retrieval_parameter_is_refused_by_name(field: str, value: float) -> None:
    with pytest.raises(NomadLabError, match=f"retrieval {field}"):
        RetrievalRequest(**{field: value})


@pytest.mark.slow
def test_gating_pools_retrieve_a_follow_up_by_its_standalone_rewrite_only_when_asked(
    tmp_path: Path, embedder
) -> None:
    goldens = tmp_path / "goldens"
    goldens.mkdir()
    follow_up = {
        "id": "mt-altitude",
        "query": "And up in the mountains?",
        "standalone": "How long should I boil water at high altitude?",
        "turns": [
            {"role": "user", "content": "Is creek water safe after boiling?"},
            {"role": "assistant", "content": "Yes, once it has boiled properly."},
        ],
        "relevantDocIds": ["water-boiling"],
    }
    lines = [*(GOLDENS / "core.jsonl").read_text("utf-8").splitlines(), json.dumps(follow_up)]
    (goldens / "core.jsonl").write_text("\n".join(lines), "utf-8")
    store = tmp_path / "ws.duckdb"
    requests = {
        flag: replace(_request(store, standalone=flag), goldens_dir=goldens, suite="core", floor=0.0)
        for flag in (False, True)
    }
    runs = {flag: retrieve(request, embedder) for flag, request in requests.items()}
    with Store(store, read_only=True) as db:
        cases = {flag: {c.golden_id: c for c in db.get_cases(run.run_id)} for flag, run in runs.items()}
        pools = {flag: db.get_pools(run.run_id) for flag, run in runs.items()}
        params = {flag: db.get_run(run.run_id).params for flag, run in runs.items()}
    assert cases[False]["mt-altitude"].query == follow_up["query"] and "standalone" not in params[False]
    assert cases[True]["mt-altitude"].query == follow_up["standalone"] and params[True]["standalone"] is True
    assert cases[True]["mt-altitude"].result["retrievedDocIds"][0] == "water-boiling"
    others = set(cases[False]) - {"mt-altitude"}
    assert all(pools[False].get(i) == pools[True].get(i) for i in others)  # only the follow-up changes
    assert all(cases[False][i].query == cases[True][i].query for i in others)
