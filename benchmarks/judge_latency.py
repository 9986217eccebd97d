"""Relevance-judge latency on the embedded model: one judge call per question over a fixed 5-passage set.

Why this number matters: the judge is one extra model call in front of every answer, so its latency is
added to every turn it is enabled on. Measured here: median and p95 wall time per call (after one
warm-up call that also loads the model), tokens processed per call (the backend's real prompt and
completion counts), and the per-model factor the TokenCalibrator learned from those real counts.
Each call uses a different question, so the prompt after the system turn is new every time (the
system prefix stays in llama.cpp's KV cache, as it would in a running Ollama).

Run: ``python benchmarks/judge_latency.py [--spec embedded:gemma3-270m] [--runs 20]``
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _measure import published  # noqa: E402

from nomad_lab.backends import open_backend  # noqa: E402
from nomad_lab.core.token_estimator import TokenCalibrator, estimate_messages_tokens  # noqa: E402
from nomad_lab.services.judge_service import JudgeStats, RelevanceJudge  # noqa: E402

CORPUS_DIR = ROOT / "datasets" / "corpus"
PREFERRED = [
    "first-aid-burns",
    "first-aid-bleeding-control",
    "first-aid-hypothermia",
    "first-aid-heat-illness",
    "distractor-walden",
]
PASSAGE_CHARS = 3000  # the reference chunker's upper size; the judge reads 1500 of them
QUESTIONS = [
    "How long should I cool a burn under running water?",
    "Should I put butter or ice on a burn?",
    "How do I stop heavy bleeding from a leg wound?",
    "When should a tourniquet be used?",
    "What are the signs of hypothermia?",
    "How do I rewarm someone who is hypothermic?",
    "What is the difference between heat exhaustion and heat stroke?",
    "How do I cool down someone with heat stroke?",
    "Write me a haiku about autumn leaves.",
    "Tell me a joke about penguins.",
    "Translate 'good morning' into French.",
    "Hello, how are you today?",
    "What did Thoreau build at Walden Pond?",
    "How do I center a div with flexbox?",
    "When does a burn need emergency care?",
    "Can I give a hypothermic person alcohol?",
    "What should I do if blood soaks through the bandage?",
    "How much water should I drink in hot weather?",
    "Write a letter to my landlord about the heating.",
    "Who wrote Pride and Prejudice?",
]


def load_passages(count: int = 5) -> tuple[list[dict[str, str]], str]:
    """Five passages (no titles: eval-corpus chunks carry none) and where they came from."""
    files = sorted(CORPUS_DIR.glob("*.md"))
    if len(files) < count:
        raise SystemExit(f"{CORPUS_DIR}: {len(files)} markdown files, the benchmark needs {count}")
    by_stem = {f.stem: f for f in files}
    chosen = [by_stem[s] for s in PREFERRED if s in by_stem][:count]
    chosen += [f for f in files if f not in chosen][: count - len(chosen)]
    passages = [{"text": f.read_text(encoding="utf-8")[:PASSAGE_CHARS]} for f in chosen]
    return passages, ", ".join(f.name for f in chosen)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile: a value that really occurred, no interpolation."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="embedded:gemma3-270m?n_ctx=4096")
    parser.add_argument("--runs", type=int, default=len(QUESTIONS))
    args = parser.parse_args(argv)

    passages, source = load_passages()
    backend = open_backend(args.spec)
    calibrator = TokenCalibrator(None)
    judge = RelevanceJudge(backend, calibrator=calibrator)
    model = judge.model

    started = time.perf_counter()
    warm = judge.judge("What is this about?", passages)
    warm_ms = (time.perf_counter() - started) * 1e3
    calibrator = judge.calibrator = TokenCalibrator(None)  # learn from the measured calls only

    stats = JudgeStats(model)
    latencies, prompts, completions, ratios, verdicts = [], [], [], [], {True: 0, False: 0, None: 0}
    for i in range(args.runs):
        question = QUESTIONS[i % len(QUESTIONS)]
        result = judge.judge(question, passages)
        stats.record(result)
        latencies.append(result.ms)
        verdicts[result.verdict] += 1
        if result.prompt_tokens:
            prompts.append(result.prompt_tokens)
            completions.append(result.completion_tokens or 0)
            ratios.append(result.prompt_tokens / estimate_messages_tokens(judge.messages(question, passages)))

    processed = [p + c for p, c in zip(prompts, completions, strict=True)]
    rows = [
        ("backend", f"`{args.spec}` ({platform.machine()}, {os.cpu_count()} cores)"),
        ("passages", f"5 ({source}), ≤{PASSAGE_CHARS} chars each, judge excerpt 1500"),
        ("warm-up call (includes model load)", f"{warm_ms:.0f} ms (verdict {warm.verdict})"),
        ("measured calls", f"{len(latencies)} (distinct questions)"),
        ("**median latency**", f"**{statistics.median(latencies):.0f} ms**"),
        ("**p95 latency** (nearest rank)", f"**{percentile(latencies, 0.95):.0f} ms**"),
        ("min / max latency", f"{min(latencies):.0f} / {max(latencies):.0f} ms"),
        (
            "**tokens processed per call** (prompt + completion, median)",
            f"**{statistics.median(processed):.0f}**" if processed else "n/a",
        ),
        ("prompt tokens per call (min–max)", f"{min(prompts)}–{max(prompts)}" if prompts else "n/a"),
        (
            "completion tokens per call (median)",
            f"{statistics.median(completions):.0f}" if completions else "n/a",
        ),
        (
            "actual ÷ uncalibrated estimate per call (min–max)",
            f"{min(ratios):.3f}–{max(ratios):.3f}" if ratios else "n/a",
        ),
        ("**calibrator factor learned** (EWMA α=0.25)", f"**{calibrator.ratio_for(model):.4f}**"),
        ("verdicts true / false / failed open", f"{verdicts[True]} / {verdicts[False]} / {verdicts[None]}"),
    ]
    print(f"### Relevance judge latency: {model}\n")
    print("| measure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    print(f"\n{stats.line()}")
    return 0


if __name__ == "__main__":
    with published(__file__):
        code = main()
    raise SystemExit(code)
