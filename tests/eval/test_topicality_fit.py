"""A topicality fit learns to reject off-topic refusals only: planted, it keeps on-topic unanswerables."""

from __future__ import annotations

import numpy as np

from nomad_lab.eval.gating.fit import fit_gate
from nomad_lab.eval.gating.run_data import RunData
from nomad_lab.gate.features import FeatureBlock, FeatureTable
from nomad_lab.gate.pools import pools_from_records


def _run(seed: int = 5) -> RunData:
    """60 answerable questions (topicality ~ 1), 30 off-topic refusals (~ -1) and 30 unanswerable refusals
    whose topicality is the answerable ones' (they retrieve on-topic passages) but whose second feature,
    a nuisance, sits apart: a fit taught to reject them leans on it."""
    rng = np.random.default_rng(seed)
    kinds = [""] * 60 + ["off-topic"] * 30 + ["unanswerable"] * 30
    topical = np.where(np.array(kinds) == "off-topic", -1.0, 1.0) + rng.normal(0, 0.5, len(kinds))
    nuisance = np.where(np.array(kinds) == "unanswerable", 1.5, 0.0) + rng.normal(0, 0.5, len(kinds))
    records = [
        {
            "id": f"q{i}",
            "tags": [f"family-{i % 6}"],  # refusal tag families group folds: spread each kind over six
            "expectRefusal": bool(k),
            **({"refusalKind": k} if k else {}),
            "relevantDocIds": [] if k else ["d"],
            "candidates": [{"docId": "d" if not k else "x", "score": 0.5, "semanticScore": 0.5}],
        }
        for i, k in enumerate(kinds)
    ]
    pools = pools_from_records(records)
    block = FeatureBlock(np.column_stack([topical, nuisance]), ["topical", "nuisance"], None)
    table = FeatureTable([r["id"] for r in records], {"pool": block})
    recall = np.where(pools.expect_refusal, np.nan, 1.0)
    return RunData("r", pools, table, ["?"] * len(kinds), recall, np.ones(len(kinds), bool), {}, None, True)


def test_a_topicality_fit_passes_unanswerable_refusals_that_a_blended_fit_rejects() -> None:
    data = _run()
    blended = fit_gate(data, ["pool"], folds=3, repeats=2).gate.figures["byKind"]
    topical = fit_gate(data, ["pool"], folds=3, repeats=2, negatives=("off-topic",)).gate
    by_kind = topical.figures["byKind"]
    assert topical.training["negatives"] == ["off-topic"]
    assert list(by_kind) == ["off-topic", "unanswerable"]
    gained = (
        by_kind["unanswerable"]["passAtRecallTarget"][0] - blended["unanswerable"]["passAtRecallTarget"][0]
    )
    assert gained > 0.3
    assert by_kind["off-topic"]["passAtRecallTarget"][0] < 0.2
