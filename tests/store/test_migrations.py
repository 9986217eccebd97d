"""Numbered migrations: an older workspace store upgrades in place and keeps every row it had."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from nomad_lab.store import SCHEMA_VERSION, ModelCall, Store, StoreSchemaError, Verdict, pair_sha256
from nomad_lab.store.schema import MIGRATIONS


def version_one_store(path: Path) -> None:
    """A store exactly as the first release wrote it: migration 1 only, version '1', one cached verdict."""
    con = duckdb.connect(str(path))
    con.execute(MIGRATIONS[0])
    con.execute("INSERT INTO nomad_lab_meta VALUES ('schema_version', '1'), ('created_by', 'nomad-lab')")
    con.execute(
        "INSERT INTO judge_verdicts VALUES ('embedded:gemma3-270m', 'abc', false, true, NULL, 12.5, 300, ?)",
        [datetime.now(UTC)],
    )
    con.close()


def version_two_store(path: Path) -> None:
    """A store as the release before the call log wrote it: migrations 1–2, version '2', one stored answer."""
    version_one_store(path)
    con = duckdb.connect(str(path))
    con.execute(MIGRATIONS[1])
    con.execute("UPDATE nomad_lab_meta SET value = '2' WHERE key = 'schema_version'")
    con.execute(
        "INSERT INTO generation_answers VALUES ('k', 'g1', 'sha', 0, '{}', '{\"answer\": \"8 drops\"}', ?)",
        [datetime.now(UTC)],
    )
    con.close()


def tables(path: Path) -> set[str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    finally:
        con.close()


def test_the_schema_version_counts_the_migrations() -> None:
    assert SCHEMA_VERSION == len(MIGRATIONS) >= 3


def test_a_version_one_store_upgrades_in_place_and_keeps_its_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    version_one_store(path)
    assert "study_rows" not in tables(path)
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        verdict = store.get_verdict("embedded:gemma3-270m", "abc")
        assert verdict is not None and verdict.on_topic is False and verdict.prompt_tokens == 300
        run_id = store.put_study_rows("estimator", {"k": 1}, [{"x": 1}])  # a version-2 table works
        assert store.study_rows("estimator", run_id) == [{"x": 1}]
    with Store(path) as again:  # reopening applies nothing twice
        assert again.schema_version == SCHEMA_VERSION


def test_a_read_only_open_reads_an_older_store_without_upgrading_it(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    version_one_store(path)
    before = path.read_bytes()
    with Store(path, read_only=True) as store:
        assert store.get_verdict("embedded:gemma3-270m", "abc") is not None
        assert store.schema_version == 1
    assert path.read_bytes() == before


def test_a_store_that_pre_dates_numbered_migrations_but_has_the_later_tables_upgrades(tmp_path: Path) -> None:
    """Earlier builds added the version-2 tables to version-1 stores without a bump."""
    path = tmp_path / "old.duckdb"
    version_one_store(path)
    con = duckdb.connect(str(path))
    con.execute(MIGRATIONS[1])
    con.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION


@pytest.mark.parametrize("version", ["0", "x", str(SCHEMA_VERSION + 1)])
def test_an_unknown_or_newer_version_is_refused_untouched(tmp_path: Path, version: str) -> None:
    path = tmp_path / "odd.duckdb"
    version_one_store(path)
    con = duckdb.connect(str(path))
    con.execute("UPDATE nomad_lab_meta SET value = ? WHERE key = 'schema_version'", [version])
    con.close()
    before = path.read_bytes()
    with pytest.raises(StoreSchemaError, match=f"store schema version {version} is not the version"):
        Store(path)
    assert path.read_bytes() == before


def test_verdicts_stored_before_confidence_read_null_and_never_asked(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    version_one_store(path)
    with Store(path, read_only=True) as old:  # no confidence columns yet: read as null
        before = old.get_verdict("embedded:gemma3-270m", "abc")
        assert before is not None and before.p_true is None and not before.confidence_asked
    with Store(path) as store:
        verdict = store.get_verdict("embedded:gemma3-270m", "abc")
        assert verdict.p_true is None and verdict.confidence_reason is None and not verdict.confidence_asked
        store.put_verdict("m", "k", Verdict(True, True, None, 5.0, 40, 0.625))
        store.put_verdict("m", "n", Verdict(True, True, None, 5.0, 40, None, "no-logprobs"))
        assert store.get_verdict("m", "k").p_true == 0.625
        assert store.get_verdict("m", "n").confidence_asked


def test_the_any_dimension_migration_keeps_minilm_vectors_and_admits_other_dimensions(tmp_path: Path) -> None:
    """A version-2 store's FLOAT[384] vectors survive the move to FLOAT[] with their dimension recorded;
    a 256-d model then shares the store, and a vector of the wrong size for a known key is refused."""
    import numpy as np

    from nomad_lab.store import StoreError

    path = tmp_path / "v2.duckdb"
    con = duckdb.connect(str(path))
    con.execute(MIGRATIONS[0])
    con.execute(MIGRATIONS[1])
    con.execute("INSERT INTO nomad_lab_meta VALUES ('schema_version', '2'), ('created_by', 'nomad-lab')")
    old = np.linspace(-1, 1, 384, dtype=np.float32)
    con.execute("INSERT INTO embeddings VALUES ('minilm|v|m', 'sha-a', ?)", [old.tolist()])
    con.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION >= 3
        assert store.embedding_dimension("minilm|v|m") == 384
        assert store.embedding_dimension("wordllama|v|m") is None
        kept = store.con.execute("SELECT vector FROM embeddings WHERE text_sha256 = 'sha-a'").fetchone()[0]
        assert np.array_equal(np.asarray(kept, dtype=np.float32), old)
        small = np.ones((2, 256), dtype=np.float32)
        store.put_embeddings("wordllama|v|m", ["sha-a", "sha-b"], small)
        assert store.embedding_dimension("wordllama|v|m") == 256
        with pytest.raises(StoreError, match=r"dimension 256.*384"):
            store.put_embeddings("minilm|v|m", ["sha-c"], small[:1])
        assert store.cached_embedding_keys("minilm|v|m", ["sha-a", "sha-c"]) == {"sha-a"}


def test_a_version_two_store_gains_the_call_log_and_keeps_its_answers(tmp_path: Path) -> None:
    path = tmp_path / "v2.duckdb"
    version_two_store(path)
    assert "model_calls" not in tables(path)
    with Store(path, read_only=True) as old:  # read as it is: no log yet, so no calls
        assert old.model_calls() == [] and old.model_call_totals() == []
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.get_answer("k", "g1", "sha", 0) == {"answer": "8 drops"}
        assert store.get_verdict("embedded:gemma3-270m", "abc") is not None
        store.record_call(ModelCall("m", "judge", "h1", 120, 3, 15.0))
        store.record_call(ModelCall("m", "answer", "h2", None, None, 2.0, "timeout"))
        logged = store.model_calls()
    assert [(c.purpose, c.prompt_tokens, c.ok, c.failure) for c in logged] == [
        ("judge", 120, True, None),
        ("answer", None, False, "timeout"),
    ]
    with Store(path) as again:
        assert again.model_calls(limit=1)[0].request_sha256 == "h2"  # the latest, ids kept across opens
        again.record_call(ModelCall("m", "judge", "h3", 1, 1, 1.0))
        assert [c.request_sha256 for c in again.model_calls(purpose="judge")] == ["h1", "h3"]


def version_five_store(path: Path) -> None:
    """A store as the release before the pair-score cache wrote it: migrations 1–5, one verdict, one call."""
    version_two_store(path)
    con = duckdb.connect(str(path))
    for migration in MIGRATIONS[2:5]:
        con.execute(migration)
    con.execute("UPDATE nomad_lab_meta SET value = '5' WHERE key = 'schema_version'")
    con.execute(
        "INSERT INTO model_calls (created_at, model, purpose, request_sha256, ms, ok) "
        "VALUES (?, 'm', 'judge', 'h1', 3.0, true)",
        [datetime.now(UTC)],
    )
    con.close()


def test_a_version_five_store_gains_the_pair_score_cache_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "v5.duckdb"
    version_five_store(path)
    assert "pair_scores" not in tables(path)
    with Store(path, read_only=True) as old:  # read as it is: no cache yet, so nothing cached
        assert old.schema_version == 5 and old.get_pair_scores("ce", [pair_sha256("q", "p")]) == {}
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION >= 6
        assert store.get_verdict("embedded:gemma3-270m", "abc") is not None
        assert [c.request_sha256 for c in store.model_calls()] == ["h1"]
        store.put_pair_scores("ce", [(pair_sha256("q", "p"), -3.5, 12.0)])
    with Store(path, read_only=True) as again:
        assert again.get_pair_scores("ce", [pair_sha256("q", "p")]) == {pair_sha256("q", "p"): (-3.5, 12.0)}
