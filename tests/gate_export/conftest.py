"""Both corpora retrieved once per session (the real MiniLM embedder, floor 0, the gating suites), a gate
fitted on each for every exportable feature set, and every question's whole pool as a pipeline sees it:
what the export, runtime and adapter tests hold to ``gate apply``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nomad_lab.core.workspace import DATASETS_DIR, DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR
from nomad_lab.data.golden_suites import GATING_SUITES

CORPORA = {
    "default": (DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR),
    "pydocs": (
        DATASETS_DIR / "corpora" / "pydocs" / "corpus",
        DATASETS_DIR / "corpora" / "pydocs" / "goldens",
    ),
}
FEATURE_SETS = ("pool", "pool,coverage", "pool,query")


@dataclass(frozen=True)
class Fitted:
    """One corpus's stored run, its gates by feature set, and each question's pipeline view."""

    corpus: str
    store: Path
    run: str
    gates: dict[str, Path]
    questions: list[dict[str, Any]]


def pipeline_questions(store: Path, run_id: str) -> list[dict[str, Any]]:
    """Each question as a pipeline holds it: its text, the whole reranked pool (text, score, raw cosine,
    source) and its query vector by the run's embedder."""
    from nomad_lab.eval.gating import load_run
    from nomad_lab.store import Store

    data = load_run(store, run_id)
    with Store(store, read_only=True) as opened:
        pools = opened.get_pools(run_id)
        chunks = {c.chunk_id: c for c in opened.get_chunks(data.pools.fingerprint)}
    vectors = data.features.query
    return [
        {
            "id": golden_id,
            "question": query,
            "queryVector": vectors[i].tolist(),
            "passages": [
                {
                    "text": chunks[p.chunk_id].text,
                    "score": p.score,
                    "semanticScore": p.semantic_score,
                    "source": chunks[p.chunk_id].source,
                }
                for p in pools.get(golden_id, [])
            ],
        }
        for i, (golden_id, query) in enumerate(zip(data.pools.ids, data.queries, strict=True))
    ]


@pytest.fixture(scope="session")
def fitted(tmp_path_factory: pytest.TempPathFactory, embedder) -> dict[str, Fitted]:
    from nomad_lab.cli import main
    from nomad_lab.eval.retrieval_service import RetrievalRequest, retrieve

    out: dict[str, Fitted] = {}
    for name, (corpus, goldens) in CORPORA.items():
        tmp = tmp_path_factory.mktemp(name)
        store = tmp / "store.duckdb"
        request = RetrievalRequest(corpus_dir=corpus, goldens_dir=goldens, suite=GATING_SUITES, floor=0.0,
                                   store_path=store, progress=False)  # fmt: skip
        run_id = retrieve(request, embedder).run_id
        gates = {}
        for kinds in FEATURE_SETS:
            path = tmp / f"{kinds.replace(',', '-')}.json"
            fit = ["gate", "fit", "--run", run_id, "--store", str(store), "--out", str(path), "--no-bank"]
            assert main([*fit, "--features", kinds, "--folds", "2", "--repeats", "1"]) == 0
            gates[kinds] = path
        out[name] = Fitted(name, store, run_id, gates, pipeline_questions(store, run_id))
    return out


def applied(fitted: Fitted, kinds: str) -> dict[str, Any]:
    """``gate apply``'s output for one gate on its own run (scores by question id, threshold)."""
    from nomad_lab.eval.gating import load_run
    from nomad_lab.eval.gating.fit import apply_gate, with_features
    from nomad_lab.gate.logistic_gate import LearnedGate

    gate = LearnedGate.load(fitted.gates[kinds])
    data = with_features(fitted.store, load_run(fitted.store, fitted.run), gate.kinds)
    return apply_gate(gate, data)
