"""Benchmark: estimator and excerpter throughput (MB/s), each against a baseline pass in the same run.

Baselines are the cheapest pass over the same text that any implementation must at least match:
``len(text) / 4`` plus a ``str.split()`` word count for the estimator, and a whitespace collapse
(``" ".join(text.split())``) for the excerpter. Ratios, not seconds, are the result (a noisy machine
moves both sides alike). Text: the corpus documents and distractors, repeated to ``--mb`` megabytes.

    python benchmarks/core_throughput.py --mb 8
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _measure import best_of, peak_mib, published

from nomad_lab.core.judge_prompt import excerpt_for
from nomad_lab.core.token_estimator import estimate_tokens

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "How long should I boil water at high altitude before drinking it?"


def corpus_text(megabytes: float) -> str:
    parts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "datasets" / "corpus").glob("*.md"))]
    text = "\n\n".join(parts)
    return (text * (int(megabytes * 2**20 / len(text)) + 1))[: int(megabytes * 2**20)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=4.0)
    args = parser.parse_args()
    text = corpus_text(args.mb)
    chunks = [text[i : i + 3000] for i in range(0, len(text), 3000)]
    mb = len(text.encode("utf-8")) / 2**20
    cases = {
        "estimate_tokens (one big text)": (
            lambda: estimate_tokens(text),
            lambda: (len(text) / 4, len(text.split())),
        ),
        "estimate_tokens (3,000-char chunks)": (
            lambda: [estimate_tokens(c) for c in chunks],
            lambda: [(len(c) / 4, len(c.split())) for c in chunks],
        ),
        "excerpt_for (3,000-char chunks)": (
            lambda: [excerpt_for(c, QUESTION) for c in chunks],
            lambda: [" ".join(c.split()) for c in chunks],
        ),
    }
    print(f"text: {mb:.1f} MB of corpus markdown, {len(chunks):,} chunks")
    print("| operation | MB/s | baseline MB/s | ratio (time vs baseline) | peak MiB |")
    print("|---|---:|---:|---:|---:|")
    for name, (fn, baseline) in cases.items():
        seconds, base_seconds = best_of(fn), best_of(baseline)
        print(
            f"| {name} | {mb / seconds:.1f} | {mb / base_seconds:.1f} | {seconds / base_seconds:.1f}× "
            f"| {peak_mib(fn):.1f} |"
        )


if __name__ == "__main__":
    with published(__file__):
        main()
