"""Benchmark: the optional nanoranker reranker's cost per passage on one core, cold and cached.

The passages are the real eval corpus's chunks (chunked as the index chunks them; ``--pool`` of them spread
over the documents and distractor books), cut to a few lengths, since the cost grows with a passage's
length: nanoranker embeds every text with its sentence encoder and hashes character 1- to 6-grams in pure
Python before its small scoring network runs. The adapter caches each text's embedding, so two figures
matter:

* cold: nothing cached (``cache_size = 0``), every passage and the question embedded in the call;
* cached: the passages were embedded before (a corpus's chunks recur across questions) and the question
  is new, so a call costs the question's embedding plus the network on each pair.

The queries are the out-of-scope bank's questions, a different one per call. The process is pinned to one
core before the model loads (nanoranker runs onnxruntime with one thread on a 2-core machine). Reported per
passage length and mode: median CPU milliseconds per passage of a ``--per-call`` passage call (the gate's
top 5, including the question's share), and the same in wall time, which the machine's other jobs inflate.

    python benchmarks/reranker_latency.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from _measure import published

from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR
from nomad_lab.data.bank import load_bank
from nomad_lab.data.corpus import load_corpus
from nomad_lab.retrieval.index import chunk_text
from nomad_lab.retrieval.trained_reranker import Reranker, load_reranker


def timed_calls(reranker: Reranker, pool: list[str], queries: list[str], calls: int, per_call: int):
    """(CPU ms, wall ms) per passage of each call after one warm-up call, queries never repeated."""
    cpu, wall = [], []
    for call in range(calls + 1):
        passages = [pool[(call * per_call + i) % len(pool)] for i in range(per_call)]
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        reranker.score(queries.pop(), passages)
        if call:  # the first call warms the ONNX sessions up
            cpu.append((time.process_time() - cpu_start) * 1e3 / per_call)
            wall.append((time.perf_counter() - wall_start) * 1e3 / per_call)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[300, 1000, 3000], help="passage chars")
    parser.add_argument("--calls", type=int, default=20, help="timed calls per length and mode")
    parser.add_argument("--per-call", type=int, default=5, help="passages scored per call")
    parser.add_argument("--pool", type=int, default=60, help="distinct chunks per length")
    args = parser.parse_args()

    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    start = time.perf_counter()
    reranker = load_reranker("nanoranker")
    load_s = time.perf_counter() - start
    corpus = load_corpus(DEFAULT_CORPUS_DIR)  # the distractor books give the full-length chunks
    chunks = [c for doc in corpus.docs for c in chunk_text(doc.text)]
    queries = [g.query for g in load_bank()]
    needed = 2 * len(args.lengths) * (args.calls + 1)
    assert len(queries) >= needed, f"{len(queries)} bank questions, {needed} calls"

    print(f"{reranker.identity}; load {load_s:.1f} s; pinned to {len(os.sched_getaffinity(0))} core")
    print(f"{len(chunks)} corpus chunks; {args.per_call} passages per call; {args.calls} calls per row\n")
    print("| passage chars | mode | CPU ms per passage | wall ms per passage |")
    print("|---:|---|---:|---:|")
    for length in args.lengths:
        long_enough = [c[:length] for c in chunks if len(c) >= length]
        pool = long_enough[:: max(1, len(long_enough) // args.pool)][: args.pool]  # spread over the corpus
        reranker.cache_size = 0
        cold = timed_calls(reranker, pool, queries, args.calls, args.per_call)
        reranker.cache_size = len(pool) + len(queries)
        for passage in pool:  # embedded once, as a corpus's chunks are
            reranker.score("warm-up", [passage])
        cached = timed_calls(reranker, pool, queries, args.calls, args.per_call)
        for mode, (cpu_ms, wall_ms) in (("cold", cold), ("cached passages", cached)):
            print(f"| {length:,} ({len(pool)} chunks) | {mode} | {cpu_ms:.1f} | {wall_ms:.1f} |")


if __name__ == "__main__":
    with published(__file__):
        main()
