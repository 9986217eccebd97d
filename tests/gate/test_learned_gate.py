"""A learned gate file: readable JSON, applies with numpy alone, refuses another embedder's pools."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate.apply import spec_mask, spec_needs
from nomad_lab.gate.families import GateInputs, Need
from nomad_lab.gate.features import FeatureBlock, FeatureTable, pool_features
from nomad_lab.gate.logistic_gate import LearnedGate, fit_logistic
from nomad_lab.gate.pools import pools_from_records
from tests.support.dumps import random_records

MINILM = {"spec": "st:", "model": "all-MiniLM-L6-v2", "version": "1", "method": "m", "dimension": 4}


def _gate(tmp_path: Path) -> tuple[Path, FeatureTable, np.ndarray]:
    pools = pools_from_records(random_records(5, 80))
    matrix, names = pool_features(pools)
    rng = np.random.default_rng(0)
    query = rng.normal(size=(pools.size, 4))
    table = FeatureTable.of(
        {
            "pool": FeatureBlock(matrix, names, MINILM),
            "query": FeatureBlock(query, [f"query_{i}" for i in range(4)], MINILM),
        },
        pools.ids,
    )
    x, columns = table.matrix(["pool", "query"])
    y = (~pools.expect_refusal).astype(int)
    mean, scale, coef, intercept = fit_logistic(x, y)
    gate = LearnedGate(
        ["pool", "query"], columns, mean.tolist(), scale.tolist(), coef.tolist(), intercept, 0.5, MINILM
    )
    return gate.save(tmp_path / "g.json"), table, x


def test_saved_gate_reads_back_and_scores_like_scikit_learn(tmp_path: Path) -> None:
    from sklearn.linear_model import LogisticRegression

    path, _, x = _gate(tmp_path)
    data = json.loads(path.read_text())
    assert (
        data["format"].startswith("nomad-lab learned gate")
        and data["embedder"]["model"] == "all-MiniLM-L6-v2"
    )
    gate = LearnedGate.load(path)
    z = (x - np.array(gate.mean)) / np.array(gate.scale)
    model = LogisticRegression()
    model.classes_, model.coef_, model.intercept_ = (
        np.array([0, 1]),
        np.array([gate.coef]),
        np.array([gate.intercept]),
    )
    assert np.allclose(gate.score(x), model.predict_proba(z)[:, 1])


def _inputs(table: FeatureTable) -> GateInputs:
    return GateInputs({Need(kind): block for kind, block in table.blocks.items()})


def test_gate_refuses_pools_from_another_embedder(tmp_path: Path) -> None:
    path, table, _ = _gate(tmp_path)
    pools = pools_from_records(random_records(5, 80))
    assert spec_needs(f"learned:{path}") == (Need("pool"), Need("query"))
    points, mask = spec_mask(pools, f"learned:{path}", _inputs(table))
    assert points.tolist() == [0.5] and mask.shape[1] == pools.size
    nomic = {**MINILM, "model": "nomic-embed-text"}
    other = FeatureTable.of({k: FeatureBlock(b.matrix, b.names, nomic) for k, b in table.blocks.items()})
    with pytest.raises(NomadLabError, match=r"fitted on all-MiniLM-L6-v2 .* from nomic-embed-text") as info:
        spec_mask(pools, f"learned:{path}", _inputs(other))
    assert "\n" not in str(info.value)


def test_a_broken_gate_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(NomadLabError, match="not a learned gate file"):
        LearnedGate.load(bad)
    with pytest.raises(NomadLabError, match="no such gate file"):
        LearnedGate.load(tmp_path / "missing.json")


def test_the_mean_of_fold_models_scores_the_mean_of_their_logits() -> None:
    """The saved gate is one linear model equal to its fold models' average logit (so the threshold set
    on their held-out scores holds on its scale), and it loses no information to the standardization."""
    from nomad_lab.gate.logistic_gate import fold_ensemble, logistic_scores, mean_of_fits

    rng = np.random.default_rng(3)
    x = rng.normal(size=(200, 4)) * [1.0, 5.0, 0.1, 2.0] + [0.0, 10.0, -3.0, 1.0]
    y = (x[:, 0] + 0.2 * x[:, 1] + rng.normal(size=200) > 2.0).astype(int)
    fits = [fit_logistic(x[i::3], y[i::3], c) for i, c in enumerate((0.1, 1.0, 10.0))]
    logits = [np.log(p / (1 - p)) for p in (logistic_scores(*f, x) for f in fits)]
    merged = logistic_scores(*mean_of_fits(fits), x)
    np.testing.assert_allclose(np.log(merged / (1 - merged)), np.mean(logits, axis=0), rtol=1e-6, atol=1e-6)
    folds = [(np.setdiff1d(np.arange(200), test), test) for test in np.array_split(np.arange(200), 4)]
    seen = []
    saved, held_out = fold_ensemble(
        lambda train: seen.append(train) or fit_logistic(x[train], y[train]), x, folds
    )
    for train, (_, test) in zip(seen, folds, strict=True):  # each score from the model that never saw it
        assert not np.intersect1d(train, test).size
        np.testing.assert_allclose(
            held_out[test], logistic_scores(*fit_logistic(x[train], y[train]), x[test])
        )
    np.testing.assert_allclose(saved[2], mean_of_fits([fit_logistic(x[t], y[t]) for t in seen])[2])


def test_coefficient_rows_fold_only_query_embedding_dimensions() -> None:
    from nomad_lab.gate.logistic_gate import coefficient_rows

    gate = LearnedGate.from_fit(
        ("query", "coverage"),
        ["query_0", "query_1", "query_terms"],
        (np.zeros(3), np.ones(3), np.array([0.3, -0.4, 2.0]), 0.0),
        0.5,
        {"model": "m"},
        {},
        {},
    )
    rows = {r["feature"]: r["coef"] for r in coefficient_rows(gate)}
    assert rows["query_terms"] == 2.0 and rows["query embedding (2 dims, L2 norm of coefs)"] == 0.5
