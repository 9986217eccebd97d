"""The ``rerank_scores`` input kind on a real stored run: nanoranker scores each pair once, a rerun reads
the pair-score cache (with the cost the model took), and an interrupted gather scores only what is missing."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from nomad_lab.eval.gating import load_run
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.inputs import rerank_scores
from nomad_lab.retrieval.trained_reranker import Reranker, load_reranker
from nomad_lab.store import Store
from tests.support.retrieval import fixture_run

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("nanoranker") is None, reason="needs nanoranker (scripts/setup.sh installs it)"
)


@pytest.fixture
def stored(tmp_path, embedder) -> tuple:
    store = tmp_path / "store.duckdb"
    return store, load_run(store, fixture_run(store, embedder, suite="core"))


@pytest.fixture
def scored(monkeypatch) -> list[int]:
    """The passages of each call the reranker gets, counted."""
    calls: list[int] = []
    score = Reranker.score

    def counting(self, query, passages):
        calls.append(len(passages))
        return score(self, query, passages)

    monkeypatch.setattr(Reranker, "score", counting)
    return calls


def test_scored_once_then_read_back_with_the_cost_the_model_took(stored, scored) -> None:
    store, data = stored
    first = rerank_scores.gather(GatherContext(store, data), "nanoranker")
    nonempty = data.pools.valid.any(axis=1)
    assert len(scored) == nonempty.sum() and first.pairs == sum(scored) and first.seconds > 0
    assert np.isfinite(first.best[nonempty]).all() and np.isnan(first.best[~nonempty]).all()
    ctx, reranker = GatherContext(store, data), load_reranker("nanoranker")
    for i in np.flatnonzero(nonempty)[:3]:  # each question's best pair, as the reranker gives it
        assert first.best[i] == max(reranker.score(data.queries[i], ctx.passages(i)))
    scored.clear()
    again = rerank_scores.gather(GatherContext(store, data), "nanoranker")
    assert scored == []
    np.testing.assert_array_equal(again.best, first.best)
    assert (again.pairs, again.seconds) == (first.pairs, pytest.approx(first.seconds))


def test_an_interrupted_gather_scores_only_what_is_missing(stored, scored) -> None:
    store, data = stored
    whole = rerank_scores.gather(GatherContext(store, data), "nanoranker")
    with Store(store) as opened:
        opened.con.execute(
            "DELETE FROM pair_scores WHERE pair_sha256 IN (SELECT pair_sha256 FROM pair_scores LIMIT 3)"
        )
    scored.clear()
    resumed = rerank_scores.gather(GatherContext(store, data), "nanoranker")
    assert 1 <= len(scored) <= 3 and sum(scored) == 3
    np.testing.assert_allclose(resumed.best, whole.best, atol=1e-6)
