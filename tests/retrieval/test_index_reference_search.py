"""On the default corpus, Qdrant searched as the reference searches it gives exact search's pools.

The stored default-corpus run (the gate-export fixture: MiniLM, floor 0, the gating suites) is retrieved
again through ``--index qdrant:DIR``: the workspace index written into a local Qdrant collection in the
reference's payload layout, each question searched with ``limit = top_k * 3``, the 0.3 threshold and the
reference's filter. Every question's top 5 must be the exact run's top 5, with the same cosines (float
noise aside), and HNSW at its default parameters must give the same top 5 too on an index this small.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nomad_lab.core.workspace import DEFAULT_GOLDENS_DIR
from nomad_lab.data.golden_suites import GATING_SUITES
from nomad_lab.store import Store
from tests.gate_export.conftest import fitted, shared_corpora  # noqa: F401  (fixtures: both corpora retrieved once)

pytest.importorskip("qdrant_client")
pytest.importorskip("faiss")


def top5(store: Path, run_id: str) -> dict[str, list[tuple[str, float]]]:
    with Store(store, read_only=True) as opened:
        pools = opened.get_pools(run_id)
    return {q: [(p.chunk_id, p.semantic_score) for p in pool[:5]] for q, pool in pools.items()}


@pytest.mark.parametrize("index", ["qdrant", "hnsw"])
def test_index_kinds_reproduce_the_exact_top_5_on_the_default_corpus(
    index: str,
    fitted,  # noqa: F811  (the imported fixture)
    embedder,
    tmp_path: Path,
) -> None:
    from nomad_lab.eval.retrieval_service import RetrievalRequest, retrieve

    run = fitted["default"]
    store = tmp_path / "store.duckdb"
    shutil.copy(run.store, store)
    spec = f"qdrant:{tmp_path / 'qdrant'}" if index == "qdrant" else index
    request = RetrievalRequest(
        corpus_dir=run.store.parent / "corpus",
        goldens_dir=DEFAULT_GOLDENS_DIR,
        suite=GATING_SUITES,
        floor=0.0,
        store_path=store,
        progress=False,
        index=spec,
    )
    searched = retrieve(request, embedder)
    assert searched.build.embedded == 0  # the workspace index was read, nothing embedded again
    exact, other = top5(store, run.run), top5(store, searched.run_id)
    assert exact.keys() == other.keys() and len(exact) > 100
    for question, pool in exact.items():
        assert [c for c, _ in other[question]] == [c for c, _ in pool], question
        assert all(abs(a - b) < 1e-5 for (_, a), (_, b) in zip(other[question], pool, strict=True))
    with Store(store, read_only=True) as opened:
        recorded = opened.get_run(searched.run_id).params["index"]
    assert recorded["kind"] == index
