"""The workspace store on real DuckDB files: schema version guard, transactions, dumps, verdict cache."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import numpy as np
import pytest

from nomad_lab.core.jsfmt import js_json_dumps
from nomad_lab.data.dump import DumpError, load_dump, validate_dump
from nomad_lab.store import (
    SCHEMA_VERSION,
    CaseRecord,
    ChunkRecord,
    IndexRecord,
    PoolEntry,
    RunRecord,
    Store,
    StoreError,
    StoreSchemaError,
    Verdict,
    judge_input_sha256,
)

REFERENCE_DUMP = {
    "fingerprint": "b4ebe5dce8699f5d",
    "params": {"topK": 5, "scoreThreshold": 0.3, "minFinalScore": 0.62, "kValues": [1, 3, 5, 10]},
    "pools": [
        {
            "id": "water-boil-time",
            "tags": ["single-hop", "numeric"],
            "expectRefusal": False,
            "relevantDocIds": ["water-boiling"],
            "candidates": [
                {"docId": "water-boiling", "score": 0.8712345678901234, "semanticScore": 0.7},
                {"docId": None, "score": 1, "semanticScore": 0.30000000000000004},
                {"docId": "distractor-walden", "score": 1e-7, "semanticScore": 0.3},
            ],
        },
        {"id": "haiku", "tags": [], "expectRefusal": True, "relevantDocIds": [], "candidates": []},
    ],
}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_new_store_has_schema_version_and_reopens(tmp_path: Path) -> None:
    path = tmp_path / "ws" / "store.duckdb"
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
    with Store(path) as store:
        assert store.latest_run_id() is None
    with Store(path, read_only=True) as store:
        assert store.schema_version == SCHEMA_VERSION


def test_incompatible_schema_version_is_refused_and_file_untouched(tmp_path: Path) -> None:
    path = tmp_path / "store.duckdb"
    Store(path).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE nomad_lab_meta SET value = '999' WHERE key = 'schema_version'")
    con.close()
    before = sha(path)
    with pytest.raises(
        StoreSchemaError,
        match=rf"schema version 999 is not the version this nomad-lab uses \({SCHEMA_VERSION}\)",
    ):
        Store(path)
    assert sha(path) == before


def test_foreign_and_corrupt_files_are_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.duckdb"
    con = duckdb.connect(str(foreign))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.close()
    with pytest.raises(StoreError, match="not a nomad-lab store"):
        Store(foreign)
    garbage = tmp_path / "garbage.duckdb"
    garbage.write_text("this is not a database" * 100)
    before = sha(garbage)
    with pytest.raises(StoreError, match=r"garbage\.duckdb"):
        Store(garbage)
    assert sha(garbage) == before
    with pytest.raises(StoreError, match="store not found"):
        Store(tmp_path / "missing.duckdb", read_only=True)


def test_index_chunks_and_embedding_cache(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    chunks = [
        ChunkRecord(f"d#{i}", "d", "/c/d.md", i, 2, f"text {i}", "text", 6, f"sha{i}") for i in range(2)
    ]
    vectors = rng.standard_normal((2, 384)).astype(np.float32)
    with Store(tmp_path / "s.duckdb") as store:
        assert store.cached_embedding_keys("m", ["sha0", "sha1"]) == set()
        store.put_embeddings("m", ["sha0", "sha1"], vectors)
        assert store.cached_embedding_keys("m", ["sha0", "shaX"]) == {"sha0"}
        assert store.cached_embedding_keys("other-model", ["sha0"]) == set()
        store.put_index(IndexRecord("f" * 16, "/c", 1, 2, "m", {"parts": ["a=1"]}, 1.5), chunks)
        got, matrix = store.index_matrix("f" * 16, "m")
        assert got == chunks and np.array_equal(matrix, vectors)
        assert store.get_index("f" * 16).params == {"parts": ["a=1"]}
        with pytest.raises(StoreError, match="lacks vectors for 2 chunk"):
            store.index_matrix("f" * 16, "other-model")
        with pytest.raises(StoreError, match="dimension 3"):
            store.put_embeddings("m", ["x"], np.zeros((1, 3), dtype=np.float32))


def test_run_write_is_all_or_nothing(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        run = RunRecord("retrieval", "a" * 16, {"topK": 5})
        duplicate_cases = [CaseRecord("q", 0, (), False, ("d",)), CaseRecord("q", 1, (), False, ("d",))]
        with pytest.raises(duckdb.Error):
            store.put_run(run, duplicate_cases, {"q": [PoolEntry(1, "d", "d#0", 0.9, 0.8)]})
        assert store.latest_run_id() is None
        assert store.con.execute("SELECT count(*) FROM pools").fetchone()[0] == 0


def test_dump_round_trip_is_byte_identical(tmp_path: Path) -> None:
    original = tmp_path / "dump.json"
    original.write_text(js_json_dumps(REFERENCE_DUMP), encoding="utf-8")
    with Store(tmp_path / "s.duckdb") as store:
        run_id = store.import_dump(load_dump(original), str(original))
        assert store.get_run(run_id).source == f"import:{original}"
        pools = store.get_pools(run_id)
        assert pools["water-boil-time"][1] == PoolEntry(2, None, None, 1.0, 0.30000000000000004)
        assert "haiku" not in pools  # an empty pool has no rows, but its case keeps its place
        exported = store.write_dump(run_id, tmp_path / "out" / "again.json")
    assert exported.read_text(encoding="utf-8") == original.read_text(encoding="utf-8")
    assert json.loads(exported.read_text())["pools"][1]["candidates"] == []


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("pools"), "pools: missing"),
        (lambda d: d.update(fingerprint="XYZ"), "fingerprint: expected 16 lowercase hex"),
        (lambda d: d["params"].pop("kValues"), "params.kValues: missing"),
        (lambda d: d["params"].update(topK="5"), "params.topK: expected a number"),
        (
            lambda d: d["pools"][0].update(expectRefusal="no"),
            "pools[0].expectRefusal: expected true or false",
        ),
        (lambda d: d["pools"][1].update(tags=[1]), "pools[1].tags: expected an array of strings"),
        (lambda d: d["pools"][1].update(id="water-boil-time"), "pools[1].id: duplicate id"),
        (lambda d: d["pools"][0]["candidates"][1].update(score="high"), "pools[0].candidates[1].score"),
        (
            lambda d: d["pools"][0]["candidates"][2].pop("semanticScore"),
            "pools[0].candidates[2].semanticScore",
        ),
        (lambda d: d["pools"][0]["candidates"][0].update(docId=3), "pools[0].candidates[0].docId"),
    ],
)
def test_bad_dumps_name_the_field(tmp_path: Path, mutate, message: str) -> None:
    dump = json.loads(json.dumps(REFERENCE_DUMP))
    mutate(dump)
    with pytest.raises(DumpError) as info:
        validate_dump(dump, "x.json")
    assert str(info.value).startswith("x.json: ") and message in str(info.value)


def test_corrupt_and_foreign_dump_files(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "fingerprint": "b4ebe5dce8699f5d",\n  "pools": [,]\n}')
    with pytest.raises(DumpError, match=r"broken.json:3: invalid JSON"):
        load_dump(broken)
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"meta": {"kind": "retrieval"}, "metrics": {}, "byTag": {}, "cases": []}))
    with pytest.raises(DumpError, match=r"report.json: fingerprint: missing \(is this a candidate dump"):
        load_dump(report)
    with pytest.raises(
        DumpError, match=r"nope.json: no such dump yet; run `nomad-lab first-run --dump .*nope.json`"
    ):
        load_dump(tmp_path / "nope.json")  # says what writes one
    with pytest.raises(DumpError, match="cannot read"):
        load_dump(tmp_path)  # a folder


def test_verdict_cache(tmp_path: Path) -> None:
    key = judge_input_sha256("Question: q\n\np1:\ntext")
    assert key == hashlib.sha256(b"Question: q\n\np1:\ntext").hexdigest()
    with Store(tmp_path / "s.duckdb") as store:
        assert store.get_verdict("embedded:gemma3-270m", key) is None
        store.put_verdict("embedded:gemma3-270m", key, Verdict(False, True, None, 812.5, 410))
        store.put_verdict("embedded:gemma3-270m", "other", Verdict(None, False, "timeout", 30000.0, None))
        assert store.get_verdict("embedded:gemma3-270m", key) == Verdict(False, True, None, 812.5, 410)
        assert store.get_verdict("ollama://h:1/m", key) is None  # keyed by model too
        store.put_verdict("embedded:gemma3-270m", "other", Verdict(True, True, None, 700.0, 400))  # a retry
        assert store.get_verdict("embedded:gemma3-270m", "other").on_topic is True
    with Store(tmp_path / "s.duckdb") as store:  # persisted
        assert store.get_verdict("embedded:gemma3-270m", key).prompt_tokens == 410


def test_a_study_run_without_rows_is_stored_as_nothing(tmp_path: Path) -> None:
    """A study may find nothing to report; storing that must not fail after the work is done."""
    with Store(tmp_path / "s.duckdb") as store:
        empty = store.put_study_rows("example", {"k": 1}, [])
        kept = store.put_study_rows("example", {"k": 2}, [{"x": 1}])
        assert store.study_rows("example", empty) == [] and store.study_rows("example", kept) == [{"x": 1}]
