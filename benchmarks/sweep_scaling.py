"""Benchmark: a 101-floor sweep over stored pools, vectorized against the naive per-floor loop.

Both run in this process on the same synthetic pools (15 candidates per question, the reference's
topK × 3), so the reported figure is a ratio, robust to a noisy machine. The naive baseline is the
reference pipeline written as a plain loop (floor, diversity, top 5, recall) for every floor and
every question; above ``--naive-max`` rows it is timed on a prefix of the pools and scaled linearly
(it is linear in pools by construction), and the table says so. Peak memory is tracemalloc's peak
(numpy reports its buffers to it).

The second baseline is what a sweep costs without stored pools: re-running retrieval once per floor.
``--retrieval-floors N`` runs the real ``eval retrieval`` function on the real corpus (core + off_topic,
index cached in a scratch store) at N floors, in this process, and reports (a) the real 101-floor
study (``nomad-lab sweep``: three gates with bootstrap intervals) over the same questions' stored pools
against 101 such runs, and (b) for each synthetic size, 101 × (seconds per retrieved question) × questions.
Runs at N of the 101 floors are measured and scaled linearly; the tables say so.

    python benchmarks/sweep_scaling.py --sizes 1000 10000 100000 1000000 --retrieval-floors 3
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _measure import peak_mib, published

from nomad_lab.gate import masks
from nomad_lab.gate.pools import PoolSet, pools_from_records

WIDTH = 15


def synthetic_records(rows: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    docs = [f"doc-{i}" for i in range(400)]
    records = []
    for i in range(max(1, rows // WIDTH)):
        refusal = rng.random() < 0.3
        relevant = [] if refusal else rng.sample(docs, rng.randint(1, 2))
        scores = sorted((rng.uniform(0.3, 0.95) for _ in range(WIDTH)), reverse=True)
        pick = [*relevant, *docs[:30]]
        records.append(
            {
                "id": f"q{i}",
                "expectRefusal": refusal,
                "relevantDocIds": relevant,
                "candidates": [
                    {"docId": rng.choice(pick), "score": s, "semanticScore": s / 1.2} for s in scores
                ],
            }
        )
    return records


def naive_sweep(records: list[dict], floors: np.ndarray, k: int = 5) -> tuple[list[float], list[float]]:
    """The reference pipeline as a loop: per floor, per question, floor → diversity → top k."""
    leaks, recalls = [], []
    for floor in floors:
        leaked, refusals, recall_sum, answerable = 0, 0, 0.0, 0
        for record in records:
            kept = [c for c in record["candidates"] if floor <= 0 or c["score"] >= floor]
            seen: dict[str, int] = {}
            scored = []
            for c in kept:
                count = seen.get(c["docId"], 0)
                seen[c["docId"]] = count + 1
                scored.append((c["score"] * 0.85**count, c["docId"]))
            top = sorted(scored, key=lambda item: -item[0])[:k]
            if record["expectRefusal"]:
                refusals += 1
                leaked += bool(top)
            else:
                relevant = set(record["relevantDocIds"])
                recall_sum += len({d for _, d in top if d in relevant}) / len(relevant)
                answerable += 1
        leaks.append(leaked / max(1, refusals))
        recalls.append(recall_sum / max(1, answerable))
    return leaks, recalls


def vectorized_sweep(pools: PoolSet, floors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    recall, nonempty = masks.evaluate_score_floors(pools, floors)
    return nonempty[:, pools.expect_refusal].mean(1), np.nanmean(recall[:, pools.n_relevant > 0], 1)


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def retrieval_per_floor(floors: int) -> tuple[float, int, float, float]:
    """Seconds per ``eval retrieval`` run over core + off_topic (mean of ``floors`` runs at spread floors),
    the number of questions, and the seconds of the full floor study and of the bare 101-floor sweep over
    the same run's stored pools."""
    import shutil

    from nomad_lab.core.workspace import DEFAULT_STORE_PATH
    from nomad_lab.eval.retrieval_eval import RetrievalEvalConfig, run_retrieval_eval
    from nomad_lab.gate.pools import load_dump
    from nomad_lab.studies.gating.floor_sweep import run_floor_study

    with tempfile.TemporaryDirectory() as scratch:
        dump = Path(scratch) / "dump.json"
        if DEFAULT_STORE_PATH.exists():  # a copy: its cached index and embeddings, none of our runs in it
            shutil.copyfile(DEFAULT_STORE_PATH, Path(scratch) / "bench.duckdb")

        def run(floor: float, **extra: object) -> object:
            config = RetrievalEvalConfig(
                suite="core,off_topic",
                floor=floor,
                store_path=Path(scratch) / "bench.duckdb",
                progress=False,
                **extra,
            )
            return run_retrieval_eval(config)

        run(0.62, dump_path=dump)  # builds the index and loads the embedder: not timed
        spent = [timed(lambda f=f: run(f))[0] for f in np.linspace(0.0, 0.7, floors)]
        pools = load_dump(dump)
        study_s, _ = timed(lambda: run_floor_study(pools, refusal_tag="off-topic"))
        sweep_s, _ = timed(lambda: vectorized_sweep(pools, masks.FLOOR_GRID))
    return float(np.mean(spent)), pools.size, study_s, sweep_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument(
        "--naive-max", type=int, default=100_000, help="largest size the naive loop runs whole"
    )
    parser.add_argument(
        "--retrieval-floors",
        type=int,
        default=0,
        metavar="N",
        help="also measure re-running real retrieval per floor, at N floors (0: skip)",
    )
    args = parser.parse_args()
    floors = masks.FLOOR_GRID
    per_question = None
    if args.retrieval_floors:
        run_s, questions, study_s, sweep_s = retrieval_per_floor(args.retrieval_floors)
        per_question = run_s / questions
        rerun = run_s * len(floors)
        print(f"Real corpus, core + off_topic ({questions} questions), {len(floors)} floors:")
        print("| approach | seconds | vs re-running retrieval |")
        print("|---|---:|---:|")
        print(
            f"| re-run `eval retrieval` per floor ({args.retrieval_floors} runs measured, "
            f"{run_s:.2f} s each, scaled) | {rerun:.0f} | 1× |"
        )
        print(f"| floor study over stored pools (3 gates, CIs) | {study_s:.2f} | {rerun / study_s:.0f}× |")
        print(f"| bare 101-floor sweep over stored pools | {sweep_s:.3f} | {rerun / sweep_s:.0f}× |")
        print()
    extra = " re-run retrieval s (est.) | speed-up |" if per_question else ""
    print(
        f"| rows | questions | vectorized s | peak MiB | naive loop s | speed-up | naive measured on |{extra}"
    )
    print("|---:|---:|---:|---:|---:|---:|---|" + ("---:|---:|" if per_question else ""))
    for rows in args.sizes:
        records = synthetic_records(rows)
        pools = pools_from_records(records)
        vec_s, (leak, recall) = timed(lambda pools=pools: vectorized_sweep(pools, floors))
        vec_mb = peak_mib(lambda pools=pools: vectorized_sweep(pools, floors))
        sample = records if rows <= args.naive_max else records[: max(1, args.naive_max // WIDTH)]
        naive_s, (n_leak, n_recall) = timed(lambda sample=sample: naive_sweep(sample, floors))
        if sample is records:
            assert np.allclose(leak, n_leak) and np.allclose(recall, n_recall), "vectorized != naive"
            note = "all questions"
        else:
            naive_s *= len(records) / len(sample)
            note = f"first {len(sample)} questions, scaled ×{len(records) / len(sample):.0f}"
        line = (
            f"| {rows:,} | {len(records):,} | {vec_s:.3f} | {vec_mb:.0f} | {naive_s:.2f} "
            f"| {naive_s / vec_s:.1f}× | {note} |"
        )
        if per_question:
            rerun = per_question * len(records) * len(floors)
            line += f" {rerun:,.0f} | {rerun / vec_s:,.0f}× |"
        print(line)


if __name__ == "__main__":
    with published(__file__):
        main()
