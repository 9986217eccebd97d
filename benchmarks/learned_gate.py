"""Benchmark: fitting and applying a learned gate on 10^5 synthetic questions, against a floor sweep.

Synthetic pools (15 candidates per question, the reference's topK × 3) and synthetic unit query vectors
stand in for a stored run; the features are the real ``gate.features.pool_features``. Timed in this
process, best of ``--repeats``:

- baseline: the 101-floor score-floor sweep over the same pools (``gates.evaluate_score_floors``), the
  cheapest gate study there is;
- features: the pool statistics of every question;
- fit: standardize + logistic regression (``gate.logistic_gate.fit_logistic``) on pool features + query
vector;
- apply: the saved gate's numpy scoring (standardize, dot product, sigmoid), as ``gate apply`` runs it.

Each is reported in seconds and as a ratio to the baseline, so the figure survives a noisy machine.

    python benchmarks/learned_gate.py --questions 100000 --dims 384
"""

from __future__ import annotations

import argparse

import numpy as np
from _measure import best_of, published

from nomad_lab.gate import masks
from nomad_lab.gate.features import pool_features
from nomad_lab.gate.logistic_gate import LearnedGate, fit_logistic
from nomad_lab.gate.pools import PoolSet

WIDTH = 15


def synthetic_pools(n: int, seed: int = 0) -> PoolSet:
    """``n`` pools: refusals score lower on average, answerable pools hold a relevant doc."""
    rng = np.random.default_rng(seed)
    refusal = rng.random(n) < 0.3
    centre = np.where(refusal, 0.5, 0.65)[:, None]
    score = -np.sort(-(centre + rng.normal(0, 0.08, (n, WIDTH))), axis=1)
    doc = rng.integers(0, 400, (n, WIDTH))
    relevant = (~refusal)[:, None] & (rng.random((n, WIDTH)) < 0.15)
    return PoolSet(
        ids=[f"q{i}" for i in range(n)],
        tags=[[] for _ in range(n)],
        expect_refusal=refusal,
        n_relevant=np.where(refusal, 0, 1),
        score=score,
        semantic=score / 1.2,
        doc=doc,
        relevant=relevant,
        doc_names=[f"doc-{i}" for i in range(400)],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100_000, help="synthetic questions")
    parser.add_argument("--dims", type=int, default=384, help="query embedding dimension (MiniLM: 384)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per step (the best is kept)")
    args = parser.parse_args()
    with published(__file__):
        pools = synthetic_pools(args.questions)
        rng = np.random.default_rng(1)
        query = rng.normal(size=(args.questions, args.dims)).astype(np.float32)
        query[~pools.expect_refusal, 0] += 0.5  # a direction that tells on-topic questions apart
        query /= np.linalg.norm(query, axis=1, keepdims=True)
        y = (~pools.expect_refusal).astype(int)
        features = {}

        def featurize() -> None:
            features["pool"] = pool_features(pools)[0]

        baseline = best_of(lambda: masks.evaluate_score_floors(pools, masks.FLOOR_GRID), args.repeats)
        t_features = best_of(featurize, args.repeats)
        x = np.hstack([features["pool"], query])
        fitted = {}

        def fit() -> None:
            fitted["params"] = fit_logistic(x, y)

        t_fit = best_of(fit, args.repeats)
        mean, scale, coef, intercept = fitted["params"]
        gate = LearnedGate(
            ["pool", "query"],
            [f"f{i}" for i in range(x.shape[1])],
            mean.tolist(),
            scale.tolist(),
            coef.tolist(),
            intercept,
            0.5,
            None,
        )
        t_apply = best_of(lambda: gate.score(x), args.repeats)
        n = args.questions
        print(
            f"{n:,} synthetic questions × {WIDTH} candidates; {x.shape[1]} features "
            f"({features['pool'].shape[1]} pool statistics + {args.dims}-d query vector); "
            f"best of {args.repeats}\n"
        )
        print("| step | seconds | µs per question | × the 101-floor sweep |")
        print("|---|---|---|---|")
        for name, t in (
            ("baseline: 101-floor score-floor sweep", baseline),
            ("pool features", t_features),
            ("fit (standardize + logistic regression)", t_fit),
            ("apply (numpy: standardize, dot, sigmoid)", t_apply),
        ):
            print(f"| {name} | {t:.3f} | {1e6 * t / n:.2f} | {t / baseline:.2f} |")


if __name__ == "__main__":
    main()
