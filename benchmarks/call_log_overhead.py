"""What logging every chat call costs: ``chat_call`` with the store as sink against a bare ``backend.chat``.

Why this number matters: the model-call boundary writes one DuckDB row per call (model, request hash,
purpose, tokens, ms, failure). Two measurements, each against its baseline in the same run:
1. an instant in-process backend (no model), so the wrapper and the insert are all there is to time:
   the worst case, as microseconds per call and a ratio;
2. the relevance judge on a real embedded model (``--spec``, default Gemma 3 270M), alternating calls
   without and with the store as sink over the same questions: the ratio a user actually pays.
It also checks that every logged row carries the judge result's own prompt and completion counts.

Run: ``python benchmarks/call_log_overhead.py [--calls 2000] [--runs 8] [--out results/call_log/overhead.md]``
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _measure import record  # noqa: E402
from judge_latency import QUESTIONS, load_passages  # noqa: E402

from nomad_lab.backends import ChatOptions, ChatRequest, ChatResult, Usage, open_backend  # noqa: E402
from nomad_lab.services.judge_service import RelevanceJudge  # noqa: E402
from nomad_lab.services.model_calls import chat_call  # noqa: E402
from nomad_lab.store import Store  # noqa: E402

REQUEST = ChatRequest(
    [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "How long should I boil water?"},
    ],
    ChatOptions(num_predict=32, temperature=0),
)


class InstantBackend:
    """Answers at once with fixed usage: isolates what the wrapper and the log add."""

    kind = "instant"
    model = "instant"

    def chat(self, request: ChatRequest) -> ChatResult:
        return ChatResult("One minute at a rolling boil.", usage=Usage(31, 8, source="instant"))


def per_call_us(fn, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - started) / calls * 1e6


def instant_rows(store: Store, calls: int) -> list[tuple[str, str]]:
    backend = InstantBackend()
    bare = per_call_us(lambda: backend.chat(REQUEST), calls)
    wrapped = per_call_us(lambda: chat_call(backend, REQUEST, purpose="bench"), calls)
    logged = per_call_us(lambda: chat_call(backend, REQUEST, purpose="bench", sink=store), calls)
    return [
        ("instant backend: bare `backend.chat`", f"{bare:.1f} µs per call ({calls:,} calls)"),
        ("instant backend: `chat_call`, no sink", f"{wrapped:.1f} µs per call"),
        ("instant backend: `chat_call` + store row", f"{logged:.1f} µs per call"),
        ("**logging cost per call** (store row − no sink)", f"**{(logged - wrapped) / 1e3:.2f} ms**"),
    ]


def model_rows(store: Store, spec: str, runs: int) -> list[tuple[str, str]]:
    passages, _ = load_passages()
    backend = open_backend(spec)
    plain = RelevanceJudge(backend, thinking_capable=False)
    logged = RelevanceJudge(backend, thinking_capable=False, sink=store)
    plain.judge("What is this about?", passages)  # loads the model; not measured
    before = len(store.model_calls(purpose="judge"))
    bare_ms, log_ms, results = [], [], []
    for i in range(runs):
        question = QUESTIONS[i % len(QUESTIONS)]
        for judge, into in (
            ((plain, bare_ms), (logged, log_ms)) if i % 2 == 0 else ((logged, log_ms), (plain, bare_ms))
        ):
            result = judge.judge(question, passages)
            into.append(result.ms)
            if judge is logged:
                results.append(result)
    rows = store.model_calls(purpose="judge")[before:]
    agree = sum(
        (r.prompt_tokens, r.completion_tokens) == (c.prompt_tokens, c.completion_tokens)
        for r, c in zip(results, rows, strict=True)
    )
    bare, log = statistics.median(bare_ms), statistics.median(log_ms)
    return [
        (f"`{spec}` judge, no log: median", f"{bare:.0f} ms ({runs} calls)"),
        (f"`{spec}` judge, store row per call: median", f"{log:.0f} ms ({runs} calls)"),
        ("**ratio with log ÷ without**", f"**{log / bare:.3f}**"),
        ("logged rows whose tokens equal the judge result's", f"{agree}/{len(results)}"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="instant-backend calls per variant")
    parser.add_argument("--runs", type=int, default=8, help="real judge calls per variant (0: skip)")
    parser.add_argument("--spec", default="embedded:gemma3-270m?n_ctx=4096", help="judge backend spec")
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch, Store(Path(scratch) / "bench.duckdb") as store:
        rows = [
            ("machine", f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
        ]
        rows += instant_rows(store, args.calls)
        if args.runs:
            rows += model_rows(store, args.spec, args.runs)
    table = "| measure | value |\n|---|---|\n" + "\n".join(f"| {name} | {value} |" for name, value in rows)
    command = " ".join(["python benchmarks/call_log_overhead.py", *(sys.argv[1:] if argv is None else argv)])
    text = f"### Call-log overhead\n\n`{command}`\n\n{table}\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        record(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
