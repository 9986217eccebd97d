"""Candidate-pool files (JSONL and Parquet) through ``nomad-lab store import``: stored alike, swept as
``score:NAME`` gates, fitted on, and refused with file:line when broken, leaving the store untouched."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from nomad_lab.cli import main
from nomad_lab.data.pool_files import detect_format
from nomad_lab.data.pool_jsonl import write_pool_jsonl
from nomad_lab.data.pool_parquet import write_pool_parquet
from nomad_lab.eval.gating import load_run
from nomad_lab.eval.gating.fit import fit_gate, with_features
from nomad_lab.eval.gating.service import curve, scores
from nomad_lab.store import Store

HEADER = {"stack": {"name": "synthetic"}}


def question(i: int, refusal: bool, *, semantic: bool = True, text: bool = True) -> dict:
    """Answerable questions retrieve their document on top with a high score; refusals score low."""
    rng = np.random.default_rng(i)
    top = (0.45 if refusal else 0.7) + 0.1 * rng.random()
    candidates = []
    for rank in range(1, 6):
        doc = "water-bleach" if rank == 1 and not refusal else f"doc-{(i + rank) % 7}"
        c = {"rank": rank, "docId": doc, "chunkId": f"{doc}#0", "score": round(top - 0.05 * rank, 6)}
        if text:
            c["text"] = f"passage about {doc}"
        if semantic:
            c["semanticScore"] = round(top - 0.06 * rank, 6)
        c["scores"] = {"rerank": round((-3.0 if refusal else 2.0) - rank + rng.random(), 6)}
        candidates.append(c)
    record = {"id": f"q{i}", "query": f"question number {i} about water", "suite": "core", "tags": ["t"]}
    if refusal:
        record["refusalKind"] = "off-topic"
    else:
        record["relevantDocIds"] = ["water-bleach"]
    return {**record, "candidates": candidates}


def records(n: int = 40, **columns: bool) -> list[dict]:
    return [question(i, i % 4 == 0, **columns) for i in range(n)]


def import_file(path: Path, store: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["store", "import", str(path), "--store", str(store)]) == 0
    out = capsys.readouterr().out
    return out.split(" as run ")[1].split()[0]


def stored(store: Path, run_id: str) -> tuple:
    with Store(store, read_only=True) as s:
        cases = [
            (c.golden_id, c.tags, c.expect_refusal, c.relevant_doc_ids, c.suite, c.query)
            for c in s.get_cases(run_id)
        ]
        pools = {
            k: [(p.rank, p.doc_id, p.chunk_id, p.score, p.semantic_score) for p in v]
            for k, v in s.get_pools(run_id).items()
        }
        return cases, pools, s.get_pool_scores(run_id, "rerank"), s.get_run(run_id).fingerprint


def test_jsonl_and_parquet_store_the_same_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = records()
    jsonl = write_pool_jsonl(tmp_path / "pools.jsonl", HEADER, rows)
    parquet = write_pool_parquet(tmp_path / "pools.parquet", HEADER, rows)
    assert (detect_format(jsonl), detect_format(parquet)) == ("jsonl", "parquet")
    store = tmp_path / "ws.duckdb"
    a, b = import_file(jsonl, store, capsys), import_file(parquet, store, capsys)
    assert stored(store, a) == stored(store, b)
    cases, pools, rerank, _ = stored(store, a)
    assert len(cases) == 40 and sum(c[2] for c in cases) == 10
    assert pools["q1"][0] == (
        1,
        "water-bleach",
        "water-bleach#0",
        rows[1]["candidates"][0]["score"],
        rows[1]["candidates"][0]["semanticScore"],
    )
    assert rerank["q1"][1] == rows[1]["candidates"][0]["scores"]["rerank"]


def test_a_score_column_sweeps_and_fits_like_a_built_in_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "ws.duckdb"
    run_id = import_file(write_pool_jsonl(tmp_path / "p.jsonl", HEADER, records()), store, capsys)
    data = load_run(store, run_id)
    best = scores(store, data, "score:rerank")
    refusal = data.pools.expect_refusal
    assert best[~refusal].min() > best[refusal].max()  # the synthetic reranker separates them
    swept = curve(store, data, "score:rerank")
    assert len(swept.points) > 10 and swept.leak.min() == 0.0 and swept.recall.max() == 1.0
    fitted = fit_gate(
        with_features(store, data, ["pool", "scores"]), [("pool", "scores")], None, folds=3, repeats=1
    )
    assert "score_rerank_1" in fitted.gate.features and "keyword_overlap" in fitted.gate.features


def test_a_missing_column_disables_what_reads_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "ws.duckdb"
    path = write_pool_jsonl(tmp_path / "p.jsonl", HEADER, records(semantic=False, text=False))
    assert main(["store", "import", str(path), "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "no semanticScore column: the semantic_1..10 pool features and the cosine gate are disabled" in out
    assert "no text column: the keyword_overlap pool feature" in out
    data = load_run(store, out.split(" as run ")[1].split()[0])
    names = data.features.blocks["pool"].names
    assert "semantic_1" not in names and "keyword_overlap" not in names and "final_1" in names
    with pytest.raises(
        Exception, match="cannot feed cosine \\(cosine: its pool file has no semanticScore column\\)"
    ):
        curve(store, data, "cosine")
    with pytest.raises(Exception, match="cannot feed coverage"):
        with_features(store, data, ["coverage"])


def good_line(**change: object) -> str:
    return json.dumps({**question(1, False), **change})


def bad_candidate(**change: object) -> str:
    record = question(1, False)
    record["candidates"][1] = {**record["candidates"][1], **change}
    return json.dumps(record)


def without(name: str) -> str:
    record = question(1, False)
    del record["candidates"][2][name]
    return json.dumps(record)


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", ":3: invalid JSON"),
        (good_line(id=""), ":3: id: expected a non-empty string"),
        (good_line(id="q0"), ":3: id: duplicate id 'q0'"),
        (
            good_line(refusalKind="rude"),
            ":3: refusalKind: expected one of off-topic, unanswerable, near-domain",
        ),
        (good_line(relevantDocIds=[]), ":3: give relevantDocIds (an answerable question) or refusalKind"),
        (
            good_line(relevantDocIds=["../etc"]),
            ":3: relevantDocIds[0]: doc id '../etc' contains a path separator",
        ),
        (good_line(colour="red"), ":3: unknown field(s) colour"),
        (bad_candidate(rank=5), ":3: candidates[1].rank: expected 2"),
        (bad_candidate(score=0.99), ":3: candidates[1].score: 0.99 is above the previous candidate's"),
        (bad_candidate(score="high"), ":3: candidates[1].score: expected a number"),
        (bad_candidate(scores={"rerank": None}), ":3: candidates[1].scores: expected an object of numbers"),
        (without("text"), ":3: candidates[2].text: missing, though"),
        (bad_candidate(text="another text"), ":3: candidates[1].text: chunk 'doc-3#0' has another text"),
    ],
)
def test_a_broken_pool_file_is_refused_with_file_and_line_and_nothing_is_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, needle: str
) -> None:
    store = tmp_path / "ws.duckdb"
    Store(store).close()
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps({"format": "nomad-lab pools v1"})
        + "\n"
        + json.dumps(question(0, True))
        + "\n"
        + line
        + "\n"
    )
    assert main(["store", "import", str(path), "--store", str(store)]) == 1
    err = capsys.readouterr().err
    assert f"{path}{needle}" in err, err
    assert "Traceback" not in err
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before


def test_a_broken_parquet_file_names_its_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = records(6)
    rows[4]["candidates"][3]["score"] = 5.0
    path = write_pool_parquet(tmp_path / "p.parquet", HEADER, rows)
    assert main(["store", "import", str(path), "--store", str(tmp_path / "ws.duckdb")]) == 1
    assert (
        f"{path}: row 5: candidates[3].score: 5.0 is above the previous candidate's"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "ws.duckdb").exists()


def test_the_refusal_kind_reaches_the_pools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = records(8)
    rows[4]["refusalKind"] = "near-domain"
    store = tmp_path / "ws.duckdb"
    data = load_run(store, import_file(write_pool_jsonl(tmp_path / "p.jsonl", HEADER, rows), store, capsys))
    kinds = dict(zip(data.pools.ids, data.pools.refusal_kinds, strict=True))
    assert (kinds["q0"], kinds["q4"], kinds["q1"]) == ("off-topic", "near-domain", "")


def test_study_gates_ranks_an_imported_file_and_lists_what_it_cannot_feed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "ws.duckdb"
    run_id = import_file(write_pool_jsonl(tmp_path / "p.jsonl", HEADER, records(48)), store, capsys)
    out = tmp_path / "gates"
    argv = ["study", "gates", "--run", run_id, "--store", str(store), "--no-ce", "--gate", "score:rerank"]
    assert main([*argv, "--fit", "pool,scores", "--folds", "2", "--repeats", "1", "--out", str(out)]) == 0
    rows = {r["gate"]: r for r in json.loads((out / "gates.json").read_text())["rows"]}
    assert rows["score:rerank (swept)"]["rocAuc"][0] == 1.0
    assert "learned: pool + scores" in rows and rows["learned: pool + scores"]["rocAuc"] is not None
    assert rows["learned: query"]["note"].startswith("not measured: query: it records no embedder")
