"""Benchmark: two pure computations the gates repeat with the same arguments, remembered, against the
same computations done again every time (how they were done before).

- **Coverage features** of a run's questions (``gate.coverage``): the default corpus (distractors in) is
  chunked as the index chunks it and every question of its gating suites gets a seeded draw of five
  chunks as its top 5 (reading is timed, not retrieval; a run's top 5 reuse a few hundred chunks across
  hundreds of questions the same way). Remembered: each text's terms and each word's stem.
- **Preset floors** (``gate.floor_presets.preset_floors``, what ``floors presets`` and ``gate export
  floor`` run) on synthetic pools (:mod:`learned_gate`'s): every bootstrap resample walks the floors
  asking for a Clopper-Pearson bound. Remembered: the bound of each (events, trials) pair.

Each is timed in this process, best of ``--repeats``: the baseline with the memory bypassed, "cold" with
the memory emptied before each run (a fresh process), "warm" with it kept (the same work again in a
notebook). The results are checked equal before anything is printed; times are also given as ratios to
the baseline, so the figure survives a noisy machine.

    python benchmarks/remembered_math.py
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from unittest import mock

import numpy as np
from _measure import best_of, published
from learned_gate import synthetic_pools

from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR
from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.golden_suites import GATING_SUITES, load_suites
from nomad_lab.gate import coverage, floor_presets, stats
from nomad_lab.gate.apply import spec_curve
from nomad_lab.retrieval.index import chunk_text

TOP = 5


def coverage_work() -> tuple[Callable[[], object], str]:
    """Vocabulary over every chunk, then one coverage row per question; what it covers."""
    chunks = [c for doc in load_corpus(DEFAULT_CORPUS_DIR).docs for c in chunk_text(doc.text)]
    queries = [g.query for g in load_suites(DEFAULT_GOLDENS_DIR, GATING_SUITES)]
    draw = random.Random(0)
    pools = [draw.sample(chunks, TOP) for _ in queries]
    what = f"{len(queries):,} questions ({GATING_SUITES}) × a drawn top {TOP} of {len(chunks):,} chunks"
    return lambda: coverage.coverage_matrix(queries, pools, coverage.Vocabulary.of(chunks)), what


def presets_work(questions: int) -> tuple[Callable[[], object], str]:
    curve = spec_curve(synthetic_pools(questions), "floor")
    what = f"{questions:,} synthetic questions, {len(curve.points)} floors, every preset"
    return lambda: [(p.floor, p.low, p.high) for p in floor_presets.preset_floors(curve)], what


def compare(name: str, work: Callable[[], object], bypassed: dict, where, forget, repeats: int) -> list:
    """Baseline (``where``'s names patched to ``bypassed``), cold and warm times; rows of the table."""
    with mock.patch.multiple(where, **bypassed):
        expected = work()
        baseline = best_of(work, repeats)
    forget()
    again = work()
    if not (np.array_equal(again, expected) if isinstance(again, np.ndarray) else again == expected):
        raise SystemExit(f"{name}: the remembered result differs from the recomputed one")

    def cold() -> None:
        forget()
        work()

    times = {"baseline: computed every time": baseline, "remembered, cold": best_of(cold, repeats)}
    times["remembered, warm"] = best_of(work, repeats)
    return [(name, way, t, t / baseline) for way, t in times.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per way (the best is kept)")
    parser.add_argument("--questions", type=int, default=600, help="synthetic questions for the presets")
    args = parser.parse_args()
    terms_work, terms_what = coverage_work()
    floors_work, floors_what = presets_work(args.questions)
    with published(__file__):
        rows = compare(
            "coverage features",
            terms_work,
            {"terms": coverage.terms.__wrapped__, "stem": coverage.stem.__wrapped__},
            coverage,
            lambda: (coverage.terms.cache_clear(), coverage.stem.cache_clear()),
            args.repeats,
        )
        rows += compare(
            "preset floors",
            floors_work,
            {"clopper_pearson_upper": stats.clopper_pearson_upper.__wrapped__},
            floor_presets,
            stats.clopper_pearson_upper.cache_clear,
            args.repeats,
        )
        print(f"coverage features: {terms_what}; preset floors: {floors_what}; best of {args.repeats}\n")
        print("| computation | way | seconds | × the baseline |")
        print("|---|---|---|---|")
        for name, way, seconds, ratio in rows:
            print(f"| {name} | {way} | {seconds:.3f} | {ratio:.3f} |")


if __name__ == "__main__":
    main()
