"""Benchmark: one query's candidate net by exact search and by HNSW, on synthetic indexes up to 10^6.

The rows are random unit vectors clustered around a few thousand centres (so neighbourhoods exist, as
in embedded text), the queries noisy copies of stored rows. Both kinds answer the reference's question
(the 15 best rows with cosine >= 0.3) through the same ``hits`` call the retrieval index makes; HNSW at
the default parameters of ``--index hnsw``, at each search beam of ``--ef``. Reported per size and beam:
milliseconds per query for each (median over the queries, one thread each as a served query would
get), the ratio, the graph's build time, and the share of exact's net HNSW returns (its recall@15
against exact). Its queries are copies of stored rows, which a narrow beam finds; questions are not,
and ``index_beam.py`` measures the beam they need on a real library.

    python benchmarks/index_search.py --sizes 100000 1000000 --dim 256 --ef 512 1024
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _measure import published

from nomad_lab.retrieval.index_kinds import open_search
from nomad_lab.retrieval.index_kinds.search_exact import ExactSearch
from nomad_lab.retrieval.index_spec import parse_index_spec

NET, THRESHOLD = 15, 0.3


def synthetic(n: int, dim: int, seed: int = 0) -> np.ndarray:
    """``n`` unit rows around ``n // 300`` random centres (float32)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(max(1, n // 300), dim)).astype(np.float32)
    rows = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        picks = rng.integers(0, len(centres), stop - start)
        rows[start:stop] = centres[picks] + rng.normal(scale=0.6, size=(stop - start, dim)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def median_ms(search, queries: np.ndarray) -> tuple[float, list[list[int]]]:
    times, found = [], []
    for q in queries:
        started = time.perf_counter()
        hits = search.hits(q, NET, THRESHOLD)
        times.append(1000 * (time.perf_counter() - started))
        found.append([h.row for h in hits])
    return statistics.median(times), found


def main() -> None:
    import faiss  # heavy
    from threadpoolctl import threadpool_limits  # heavy: scikit-learn's

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--ef", type=int, nargs="+", help="search beams timed on the same graph (default: hnsw's default)"
    )
    args = parser.parse_args()
    spec = parse_index_spec("hnsw")
    beams = args.ef or [int(spec.options["ef_search"])]
    with published(__file__):
        graph = {k: v for k, v in spec.identity().items() if k != "ef_search"}
        print(f"synthetic unit vectors, dimension {args.dim}; {args.queries} queries; net of {NET} at "
              f"cosine >= {THRESHOLD}; HNSW {graph}; one thread per query\n")  # fmt: skip
        for n in args.sizes:
            matrix = synthetic(n, args.dim)
            rng = np.random.default_rng(1)
            picks = rng.integers(0, n, args.queries)
            queries = matrix[picks] + rng.normal(scale=0.05, size=(args.queries, args.dim)).astype(np.float32)
            print(f"**{n:,}** chunks\n")
            print("| ef_search | exact ms/query | hnsw ms/query | × faster | hnsw build s | hnsw recall@15 |")
            print("|---|---|---|---|---|---|")
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                hnsw = open_search(spec, matrix, Path(tmp), "bench")
                build = time.perf_counter() - started
                exact = ExactSearch(matrix)
                exact.norms  # noqa: B018  (computed once per index, as in a served index)
                with threadpool_limits(1):  # numpy's BLAS on one thread, as faiss below
                    exact_ms, want = median_ms(exact, queries)
                faiss.omp_set_num_threads(1)
                for ef in beams:
                    hnsw.ef_search = ef
                    hnsw_ms, got = median_ms(hnsw, queries)
                    print(f"| {ef} | {exact_ms:.2f} | {hnsw_ms:.3f} | {exact_ms / hnsw_ms:.0f} | "
                          f"{build:.0f} | {recall_against(want, got):.3f} |")  # fmt: skip
                faiss.omp_set_num_threads(os.cpu_count() or 1)
            print()


def recall_against(want: list[list[int]], got: list[list[int]]) -> float:
    """The share of exact's rows the approximate nets hold."""
    wanted = sum(len(w) for w in want)
    return sum(len(set(w) & set(g)) for w, g in zip(want, got, strict=True)) / max(1, wanted)


if __name__ == "__main__":
    main()
