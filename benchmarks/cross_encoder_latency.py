"""Benchmark: the cross-encoder gate's cost per question on this CPU, windowed against one 512-token pass.

What a ``ce:`` gate costs a question is one cross-encoder pass per window of each passage of its top-5
set. The questions and their top-5 sets are a stored retrieval run's (``--store``, ``--run``; default the
latest run in the workspace store), ``--questions`` of them spread evenly over the run. Each spec of
``--specs`` scores the same questions, the first being the baseline; the specs take turns question by
question (the order rotating), so the machine's other work falls on each alike. Nothing is read from or
written to the pair-score cache: every figure is a model pass.

Reported per spec: windows per question, median and mean wall milliseconds per question, median CPU
milliseconds (both threads counted), and the ratio to the baseline: of the medians, and the median of
the per-question ratios with a 95% bootstrap interval.

    python benchmarks/cross_encoder_latency.py
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from _measure import published

from nomad_lab.core.workspace import DEFAULT_STORE_PATH
from nomad_lab.eval.gating import load_run
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.retrieval.cross_encoder import load_cross_encoder

SEED = 1341


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=DEFAULT_STORE_PATH)
    parser.add_argument("--run", default=None, help="stored retrieval run (default: the latest)")
    parser.add_argument("--questions", type=int, default=40, help="questions timed (spread over the run)")
    parser.add_argument(
        "--specs",
        nargs="+",
        default=["ms-marco-minilm-l12?window=0", "ms-marco-minilm-l12"],
        help="cross-encoder specs; the first is the baseline",
    )
    args = parser.parse_args()

    data = load_run(args.store, args.run, embed=False)
    ctx = GatherContext(args.store, data)
    nonempty = [i for i in range(data.pools.size) if ctx.passages(i)]
    picked = nonempty[:: max(1, len(nonempty) // args.questions)][: args.questions]
    scorers = [load_cross_encoder(spec) for spec in args.specs]
    for scorer in scorers:  # warm the session up
        scorer.score(data.queries[picked[0]], ctx.passages(picked[0])[:1])
    wall = np.zeros((len(scorers), len(picked)))
    cpu = np.zeros_like(wall)
    windows = np.zeros_like(wall)
    for q, i in enumerate(picked):
        passages = ctx.passages(i)
        for turn in range(len(scorers)):
            s = (q + turn) % len(scorers)
            pairs = [(data.queries[i], w) for p in passages for w in scorers[s].windows(p)]
            cpu_start, wall_start = time.process_time(), time.perf_counter()
            scorers[s].score_pairs(pairs)
            wall[s, q] = 1000 * (time.perf_counter() - wall_start)
            cpu[s, q] = 1000 * (time.process_time() - cpu_start)
            windows[s, q] = len(pairs)

    rng = np.random.default_rng(SEED)
    print(f"run {data.run_id}: {len(picked)} of {data.pools.size} questions, their top-5 sets at floor 0")
    print(f"model: {scorers[0].model_key}; 2 threads\n")
    print(
        "| spec | windows per question | wall ms per question, median | wall ms per question, mean | "
        "CPU ms, median | ratio of medians | median per-question ratio [95% CI] |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for s, scorer in enumerate(scorers):
        ratios = wall[s] / wall[0]
        boot = [np.median(rng.choice(ratios, len(ratios))) for _ in range(2000)]
        low, high = np.percentile(boot, [2.5, 97.5])
        print(
            f"| `{scorer.spec}` ({scorer.spec.windowing}) | {windows[s].mean():.1f} | "
            f"{statistics.median(wall[s]):.0f} | {wall[s].mean():.0f} | {statistics.median(cpu[s]):.0f} | "
            f"{statistics.median(wall[s]) / statistics.median(wall[0]):.2f} | "
            f"{np.median(ratios):.2f} [{low:.2f}, {high:.2f}] |"
        )


if __name__ == "__main__":
    with published(__file__):
        main()
