"""Benchmark: the content-aware estimator and the exact mode against the seed's estimator, same run.

Text: the estimator study's samples of every content class (prose, tables, code, JSON, bullets, CJK,
whole documents), concatenated and repeated to ``--mb`` megabytes, estimated in 3,000-character
chunks (the planner costs chunks and turns, not one huge string). The seed's ``estimate_tokens`` is
the baseline; ratios are the result, MB/s beside them. The exact mode loads only the vocabulary of
each local GGUF. Writes the table, with a machine line, to ``--out``.

    flock runs/heavy.lock python benchmarks/estimator_throughput.py --mb 4
    python benchmarks/estimator_throughput.py --mb 4 --no-exact   # estimators only, no tokenizer load
"""

from __future__ import annotations

import argparse
import os
import platform
from collections.abc import Callable
from pathlib import Path

from _measure import best_of, record

from nomad_lab.backends.exact_tokens import ExactEstimator
from nomad_lab.backends.tokenizers import GGUF_FILES
from nomad_lab.core.content_estimator import ContentEstimator
from nomad_lab.core.token_estimator import estimate_tokens
from nomad_lab.studies.budgeting.estimator import collect_samples

ROOT = Path(__file__).resolve().parents[1]


def sample_text(megabytes: float) -> str:
    text = "\n\n".join(s.text for s in collect_samples(ROOT / "datasets"))
    size = int(megabytes * 2**20)
    return (text * (size // len(text) + 1))[:size]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=4.0, help="megabytes of text to estimate")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "estimator" / "throughput.md")
    parser.add_argument("--no-exact", action="store_true", help="skip the exact mode (loads no tokenizer)")
    args = parser.parse_args()
    text = sample_text(args.mb)
    chunks = [text[i : i + 3000] for i in range(0, len(text), 3000)]
    mb = len(text.encode("utf-8")) / 2**20
    content = ContentEstimator()  # factors do not change the work done, only the scale
    cases: dict[str, Callable[[], object]] = {
        "seed segmenter (baseline)": lambda: [estimate_tokens(c) for c in chunks],
        "content-aware": lambda: [content.estimate(c) for c in chunks],
    }
    for name, path in {} if args.no_exact else GGUF_FILES.items():
        exact = ExactEstimator(path())
        cases[f"exact: {name}"] = lambda exact=exact: [exact.estimate(c) for c in chunks]
    base = best_of(cases["seed segmenter (baseline)"])
    lines = [
        f"machine: {platform.machine()} {platform.processor() or ''} · {os.cpu_count()} CPUs (shared) · "
        f"Python {platform.python_version()} · {platform.system()} {platform.release()}",
        f"text: {mb:.1f} MB of estimator-study samples (all classes), {len(chunks):,} chunks of 3,000 chars",
        "",
        "| estimator | MB/s | s per MB | time vs seed |",
        "|---|---:|---:|---:|",
    ]
    for name, fn in cases.items():
        seconds = base if name.startswith("seed") else best_of(fn)
        lines.append(f"| {name} | {mb / seconds:.1f} | {seconds / mb:.3f} | {seconds / base:.2f}× |")
    table = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(table, encoding="utf-8")
    record(args.out)
    print(table)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
