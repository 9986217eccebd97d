"""A stored retrieval run ready for gating: pools, labels, the queries, and its base features.

Why here (the eval ring): gathering reads the store and, for the query embedding, the run's own
embedder; the feature math itself stays pure in ``nomad_lab.gate.features``. Query vectors are embedded
with the embedder the run RECORDS (its spec, checked against its recorded identity: model, version,
method, dimension), never with whatever embedder is at hand, and cached in the store's embedding table
under a query key, so a second gather makes no embedding call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.first_run import first_run_line
from nomad_lab.gate import masks
from nomad_lab.gate.features import FeatureBlock, FeatureTable, pool_features
from nomad_lab.gate.keywords import keyword_overlap
from nomad_lab.gate.logistic_gate import describe, same_embedder
from nomad_lab.gate.pools import PoolSet, pools_from_records
from nomad_lab.retrieval.embedding import load_embedder
from nomad_lab.retrieval.index import stored_query_vectors
from nomad_lab.services.verdict_cache import judged_set
from nomad_lab.store import Store


@dataclass(frozen=True)
class RunData:
    """One stored run ready for gating: ``base_recall`` is recall@5 with no gate (NaN: no relevant doc),
    ``base_nonempty`` whether the ungated pool returns anything."""

    run_id: str
    pools: PoolSet
    features: FeatureTable
    queries: list[str]
    base_recall: np.ndarray
    base_nonempty: np.ndarray
    embedder: dict[str, Any]
    corpus_dir: str | None
    include_distractors: bool
    score_columns: tuple[str, ...] = ()
    """The named score columns of an imported pool file (``score:NAME`` gates, the ``scores`` kind)."""
    lacking: Mapping[str, str] = field(default_factory=dict)
    """Gate families and input kinds this run cannot feed, each with why (an imported pool file without
    texts, raw cosines or a loadable embedder); the gating service refuses them in one line."""

    def refuse_lacking(self, names: Sequence[str], where: str) -> None:
        """One error line if any of ``names`` (families, input kinds) is one this run cannot feed."""
        lacked = [name for name in dict.fromkeys(names) if name in self.lacking]
        if lacked:
            reasons = "; ".join(f"{n}: {self.lacking[n]}" for n in lacked)
            raise NomadLabError(f"{where}: run {self.run_id} cannot feed {', '.join(lacked)} ({reasons})")


def subset_run(data: RunData, mask: np.ndarray) -> RunData:
    """The run restricted to the questions where ``mask`` is true."""
    return replace(
        data,
        pools=data.pools.subset(mask),
        features=data.features.subset(np.flatnonzero(mask)),
        queries=[q for q, keep in zip(data.queries, mask, strict=True) if keep],
        base_recall=data.base_recall[mask],
        base_nonempty=data.base_nonempty[mask],
    )


def query_vectors(
    store: Store, identity: dict[str, Any] | None, queries: Sequence[str], where: str
) -> np.ndarray:
    """The queries' vectors by the run's recorded embedder (cached in the store; refused on a mismatch)."""
    if not identity or "spec" not in identity:
        raise NomadLabError(f"{where}: the run records no embedder identity; re-run its retrieval to gate it")
    embedder = load_embedder(identity["spec"])
    if not same_embedder(embedder.identity(), identity):
        raise NomadLabError(
            f"{where}: the run was embedded with {describe(identity)}, its spec now loads "
            f"{describe(embedder.identity())}; refusing to mix query vectors"
        )
    return stored_query_vectors(store, embedder, queries).astype(float)


PASSAGE_READERS = (
    "judge",
    "rerank",
    "ce",
    "answer",
    "verdicts",
    "rerank_scores",
    "pair_scores",
    "answer_scores",
    "coverage",
)
"""Gate families and input kinds that read passage texts."""


def lacking_inputs(params: Mapping[str, Any]) -> dict[str, str]:
    """What an imported pool file's run cannot feed, from the columns it recorded (a run retrieved here
    records none and lacks nothing)."""
    columns = params.get("poolColumns")
    lacking: dict[str, str] = {}
    if columns is not None and "semanticScore" not in columns:
        lacking["cosine"] = "its pool file has no semanticScore column"
    if columns is not None and "text" not in columns:
        lacking.update(dict.fromkeys(PASSAGE_READERS, "its pool file has no text column"))
    if "spec" not in (params.get("embedder") or {}):
        lacking["query"] = (
            "it records no embedder this package can load (its pool file's header.embedder.spec)"
        )
    return lacking


def stored_pools(store: Store, run_id: str) -> PoolSet:
    """A stored run's pools as the gate math reads them (question order; tags, refusal kinds, relevant
    documents): the one place a stored run becomes pools, the dump staying an import/export format."""
    dump = store.export_dump(run_id)
    return pools_from_records(
        dump["pools"], fingerprint=dump["fingerprint"], params=dump["params"], source=run_id
    )


def load_run(store_path: str | Path, run_id: str | None = None, *, embed: bool = True) -> RunData:
    """Gather a stored run (None: the latest retrieval run) into pools and features."""
    with Store(store_path) as store:
        run_id = run_id or store.latest_run_id("retrieval")
        if run_id is None:
            raise NomadLabError(first_run_line(f"{store_path}: no retrieval run stored yet"))
        run = store.get_run(run_id)
        lacking = lacking_inputs(run.params)
        pools = stored_pools(store, run_id)  # without raw cosines the final score stands in (cosine refused)
        cases = {c.golden_id: c for c in store.get_cases(run_id)}
        queries = [cases[i].query or "" for i in pools.ids]
        stored = store.get_pools(run_id)
        chunks = {c.chunk_id: c for c in store.get_chunks(run.fingerprint)}
        overlap = np.array(
            [
                keyword_overlap(q, [c.text for c in judged_set(stored.get(i, []), chunks, 0.0)])
                for i, q in zip(pools.ids, queries, strict=True)
            ]
        )
        identity = run.params.get("embedder")
        embed = embed and "query" not in lacking
        vectors = query_vectors(store, identity, queries, f"run {run_id}") if embed else None
        index = store.get_index(run.fingerprint)
    texts = "coverage" not in lacking
    matrix, names = pool_features(pools, overlap if texts else None, semantic_scores="cosine" not in lacking)
    blocks = {"pool": FeatureBlock(matrix, names, identity)}
    if vectors is not None:
        blocks["query"] = FeatureBlock(vectors, [f"query_{i}" for i in range(vectors.shape[1])], identity)
    features = FeatureTable(
        list(pools.ids), blocks, identity, source={"run": run_id, "fingerprint": run.fingerprint}
    )
    recall, nonempty = masks.evaluate(pools, pools.valid[None])
    return RunData(
        run_id,
        pools,
        features,
        queries,
        recall[0],
        nonempty[0],
        identity or {},
        None if index is None else index.corpus_dir,
        bool(run.params.get("includeDistractors", True)),
        tuple(run.params.get("poolScores", ())),
        lacking,
    )
