"""The pair-score cache: keyed by scorer and exact (question, text) pair."""

from __future__ import annotations

from pathlib import Path

from nomad_lab.store import Store, pair_sha256


def test_pair_hashes_separate_question_from_text() -> None:
    assert pair_sha256("ab", "c") != pair_sha256("a", "bc")  # the NUL keeps the boundary
    assert pair_sha256("q", "p") == pair_sha256("q", "p") and len(pair_sha256("q", "p")) == 64


def test_scores_are_kept_per_scorer_and_pair(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    a, b, c = (pair_sha256("q", t) for t in ("one", "two", "three"))
    with Store(path) as store:
        assert store.get_pair_scores("model-x", [a]) == {} and store.get_pair_scores("model-x", []) == {}
        store.put_pair_scores("model-x", [(a, 1.5, 2.0), (b, -7.25, None)])
        store.put_pair_scores("model-y", [(a, 9.0, 1.0)])
        store.put_pair_scores("model-x", [])
    with Store(path, read_only=True) as store:
        assert store.get_pair_scores("model-x", [a, b, c, a]) == {a: (1.5, 2.0), b: (-7.25, None)}
        assert store.get_pair_scores("model-y", [a, b]) == {a: (9.0, 1.0)}


def test_a_re_score_replaces_the_cached_one(tmp_path: Path) -> None:
    a = pair_sha256("q", "p")
    with Store(tmp_path / "s.duckdb") as store:
        store.put_pair_scores("m", [(a, 2.0, 1.0)])
        store.put_pair_scores("m", [(a, 3.0, 1.5)])
        assert store.get_pair_scores("m", [a]) == {a: (3.0, 1.5)}
