"""Benchmark: retrieval query latency on synthetic indexes of 10^3 … 10^5 chunks (or more).

The synthetic index is the real eval corpus's chunks and MiniLM vectors (read from the workspace
store, or built into it once), replicated to the target size with small Gaussian noise on each copy and
re-normalized, so cosine scores, the candidate net and the rerank see realistic distributions. The
queries are real core questions, embedded once (query embedding is timed on its own: it does not
depend on the index size).

Reported per size, all measured in this process on the same index and queries:
  * ``search``: ``RetrievalIndex.search`` with the query vector given (net, rerank, floor, diversity);
  * ``dense``: the candidate net alone (partial top-k over precomputed norms);
  * the baseline, the candidate net as first written (norms per query and a full stable argsort),
    with the speed-up of ``dense`` over it;
  * peak traced memory of a search, and the index matrix's size.

    python benchmarks/retrieval_latency.py --sizes 1000 10000 100000
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from _measure import peak_mib, published

from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR, DEFAULT_STORE_PATH
from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.golden_suites import load_suites
from nomad_lab.retrieval.embedding import load_embedder
from nomad_lab.retrieval.index import RetrievalIndex, build_index
from nomad_lab.store import Store

NET = 15  # the reference's top_k × 3


def full_sort_dense(index: RetrievalIndex, query: np.ndarray, limit: int, threshold: float) -> list[int]:
    """The baseline: the candidate net with norms per query and a full stable sort of every chunk."""
    norms = np.linalg.norm(index.matrix, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
    cosines = (index.matrix @ query) / np.maximum(norms, 1e-12)
    order = np.argsort(-cosines, kind="stable")
    return [int(i) for i in order[:limit] if cosines[i] >= threshold]


def replicated(base: RetrievalIndex, size: int, seed: int = 0) -> RetrievalIndex:
    """``base`` grown to ``size`` chunks: copies of its chunks with noisy, re-normalized vectors."""
    rng = np.random.default_rng(seed)
    picks = np.arange(size) % len(base.chunks)
    matrix = base.matrix[picks] + rng.normal(0, 0.02, (size, base.matrix.shape[1])).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    chunks = [replace(base.chunks[p], chunk_id=f"{base.chunks[p].chunk_id}~{i}") for i, p in enumerate(picks)]
    return replace(base, chunks=chunks, matrix=matrix)


def median_ms(fn, items) -> float:
    times = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50, help="core questions timed per size")
    parser.add_argument("--store", type=Path, default=DEFAULT_STORE_PATH, help="store holding the index")
    args = parser.parse_args()

    embedder = load_embedder()
    corpus = load_corpus(DEFAULT_CORPUS_DIR)
    goldens = load_suites(DEFAULT_GOLDENS_DIR, "core", corpus.all_doc_ids)[: args.queries]
    with Store(args.store) as store:  # the index is cached there by fingerprint: built once, ever
        base, _ = build_index(corpus, store, embedder, progress=True)
    start = time.perf_counter()
    vectors = base.embed_queries([g.query for g in goldens])
    embed_ms = (time.perf_counter() - start) * 1e3 / len(goldens)
    pairs = list(zip((g.query for g in goldens), vectors, strict=True))
    print(f"query embedding: {embed_ms:.1f} ms per query (independent of index size)\n")
    print(
        "| chunks | matrix MiB | search ms | dense ms | full-sort dense ms (baseline) | speed-up | peak MiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        index = replicated(base, size)
        index.search_kind.norms  # noqa: B018  (computed once per index, as in a served index)
        for _, v in pairs[:3]:  # warm-up
            assert index.dense(v, NET, 0.3) is not None
        base_ms = median_ms(lambda p, index=index: full_sort_dense(index, p[1], NET, 0.3), pairs)
        dense_ms = median_ms(lambda p, index=index: index.dense(p[1], NET, 0.3), pairs)
        search_ms = median_ms(lambda p, index=index: index.search(p[0], query_vector=p[1]), pairs)
        same = all(
            [c.chunk_id for c in index.dense(v, NET, 0.3)]
            == [index.chunks[i].chunk_id for i in full_sort_dense(index, v, NET, 0.3)]
            for _, v in pairs
        )
        assert same, "the partial top-k disagrees with the full sort"
        peak = peak_mib(lambda index=index: index.search(pairs[0][0], query_vector=pairs[0][1]))
        print(
            f"| {size:,} | {index.matrix.nbytes / 2**20:.0f} | {search_ms:.2f} | {dense_ms:.2f} "
            f"| {base_ms:.2f} | {base_ms / dense_ms:.1f}× | {peak:.1f} |"
        )


if __name__ == "__main__":
    with published(__file__):
        main()
