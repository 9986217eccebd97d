"""What the judge's confidence costs on the embedded backend: a verdict with P(true) against one without.

Three ways to judge the same sets, measured in the same run on the same model:

- ``verdict``: the reference path, the grammar-constrained verdict alone (no logprobs asked);
- ``verdict+P``: the same constrained call with P(true) read from the raw logits at the verdict token;
- ``prefill P``: no generation at all: one forward pass over the prompt plus ``{"on_topic":`` and P(true)
  read from the next-token distribution (its verdict is P(true) >= 0.5; agreement with the constrained
  verdict is reported, since only the constrained call is the reference).

The modes run one after another over all questions, round after round, so every call finds only the
judge's fixed system-prompt prefix in llama.cpp's KV cache (the previous call's question differs), as a
running judge would; "tokens evaluated" is the prompt minus that reused prefix. Ratios are medians of
the per-question ratios against ``verdict``, from the same run.

Run: ``python benchmarks/judge_confidence_cost.py [--spec embedded:gemma3-270m] [--rounds 2]``
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _measure import record  # noqa: E402
from judge_latency import QUESTIONS, load_passages  # noqa: E402

from nomad_lab.backends import ChatRequest, open_backend  # noqa: E402
from nomad_lab.services.judge_service import RelevanceJudge  # noqa: E402

OUT = ROOT / "results" / "judge_confidence"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="embedded:gemma3-270m", help="an embedded backend spec")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the questions per mode")
    parser.add_argument("--out", type=Path, default=OUT, help="where cost.md is written")
    args = parser.parse_args(argv)

    passages, source = load_passages()
    backend = open_backend(args.spec)
    plain = RelevanceJudge(backend, thinking_capable=False, confidence=False)
    with_p = RelevanceJudge(backend, thinking_capable=False, confidence=True)
    plain.judge("What is this about?", passages)  # warm-up: loads the model, caches the system prefix

    ms: dict[str, dict[str, list[float]]] = {m: {} for m in ("verdict", "verdict+P", "prefill P")}
    evaluated: dict[str, list[int]] = {m: [] for m in ms}
    verdicts: dict[str, bool | None] = {}
    p_constrained: dict[str, float | None] = {}
    p_prefill: dict[str, float] = {}
    for _ in range(args.rounds):
        for q in QUESTIONS:
            r = plain.judge(q, passages)
            ms["verdict"].setdefault(q, []).append(r.ms)
            evaluated["verdict"].append((r.prompt_tokens or 0) - (r.cached_prompt_tokens or 0))
            verdicts[q] = r.verdict
        for q in QUESTIONS:
            r = with_p.judge(q, passages)
            ms["verdict+P"].setdefault(q, []).append(r.ms)
            evaluated["verdict+P"].append((r.prompt_tokens or 0) - (r.cached_prompt_tokens or 0))
            p_constrained[q] = r.p_true
        for q in QUESTIONS:
            request = ChatRequest(with_p.messages(q, passages), with_p.options())
            started = time.perf_counter()
            p, count = backend.prefill_confidence(request)  # type: ignore[attr-defined]
            ms["prefill P"].setdefault(q, []).append((time.perf_counter() - started) * 1e3)
            evaluated["prefill P"].append(count)
            p_prefill[q] = p

    def median_ms(mode: str) -> float:
        return statistics.median(t for ts in ms[mode].values() for t in ts)

    def ratio(mode: str) -> float:
        return statistics.median(
            statistics.median(ms[mode][q]) / statistics.median(ms["verdict"][q]) for q in QUESTIONS
        )

    agree = sum((p_prefill[q] >= 0.5) == verdicts[q] for q in QUESTIONS if verdicts[q] is not None)
    judged = sum(verdicts[q] is not None for q in QUESTIONS)
    gaps = [abs(p_prefill[q] - p_constrained[q]) for q in QUESTIONS if p_constrained[q] is not None]
    lines = [
        f"### Judge confidence cost: `{args.spec}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{len(QUESTIONS)} questions × {args.rounds} rounds per mode; passages: {source}.",
        "",
        "| mode | median ms per call | ratio to verdict (median per question) "
        "| tokens evaluated per call (median) |",
        "|---|---:|---:|---:|",
    ]
    for mode in ms:
        tokens = statistics.median(evaluated[mode])
        lines.append(f"| {mode} | {median_ms(mode):.0f} | {ratio(mode):.2f} | {tokens:.0f} |")
    lines += [
        "",
        f"- prefill P(true) >= 0.5 agrees with the constrained verdict on {agree}/{judged} questions.",
        f"- |prefill P(true) - P(true) at the constrained verdict token|: median "
        f"{statistics.median(gaps):.3f}, max {max(gaps):.3f} (the constrained call may put a space first).",
        f"- constrained verdicts true/false: {sum(v is True for v in verdicts.values())}/"
        f"{sum(v is False for v in verdicts.values())}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cost.md").write_text(text)
    record(args.out / "cost.md")
    print(f"wrote {args.out / 'cost.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
