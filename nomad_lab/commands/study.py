"""``nomad-lab study …``: the measured experiments behind the seed's claims, one subcommand each."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .study_injection import register_injection

ROOT = Path(__file__).resolve().parents[2]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("study", help="rerunnable experiments (estimator error, ...)")
    studies = parser.add_subparsers(dest="study", metavar="STUDY", required=True)
    estimator = studies.add_parser("estimator", help="token estimator error against real tokenizers")
    estimator.add_argument("--datasets", type=Path, default=ROOT / "datasets")
    estimator.add_argument("--out", type=Path, default=ROOT / "results" / "estimator")
    estimator.add_argument("--tokenizer", action="append", help="limit to this tokenizer (repeatable)")
    estimator.set_defaults(func=run_estimator)
    judges = studies.add_parser("judges", help="relevance judge models against floor-only, paired tests")
    judges.add_argument("--judge-model", action="append", required=True, metavar="SPEC", help="repeatable")
    judges.add_argument("--suite", default="off_topic")
    judges.add_argument("--floor", type=float, default=0.0, help="the floor the judge runs after")
    judges.add_argument("--limit", type=int, default=None, help="judge only the first N questions")
    judges.add_argument("--out", type=Path, default=ROOT / "results" / "judges")
    judges.set_defaults(func=run_judges)
    placement = studies.add_parser("placement", help="prefill per turn for tail vs front RAG placement")
    placement.add_argument("--model", default=None, help="GGUF path (default: the embedded Gemma 3 270M)")
    placement.add_argument("--corpus", type=Path, default=ROOT / "datasets" / "corpus")
    placement.add_argument("--turns", type=int, default=16)
    placement.add_argument("--context-window", type=int, default=8192)
    placement.add_argument("--out", type=Path, default=ROOT / "results" / "placement")
    placement.set_defaults(func=run_placement)
    register_injection(studies)


def run_estimator(args: argparse.Namespace) -> int:
    from ..estimator_study import markdown, run

    summary, paths = run(args.datasets, args.out, args.tokenizer)
    print(markdown(summary))
    for name, path in paths.items():
        print(f"wrote {name}: {path}")
    return 0


def run_placement(args: argparse.Namespace) -> int:
    from ..prefill_study import load_or_run

    result = load_or_run(
        args.out,
        args.corpus,
        turns=args.turns,
        context_window=args.context_window,
        model=args.model,
        recompute=True,
    )
    for key, ms in result["at_last_turn"].items():
        print(f"turn {args.turns} prefill {key}: {ms:.0f} ms")
    print("reload:", {k: round(v) for k, v in result["reload"].items()})
    print(f"wrote {args.out}/placement.json and {args.out}/prefill_vs_turn.png")
    return 0


def run_judges(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from ..judge_study import markdown, run_judge_study

    rows = run_judge_study(args.judge_model, suite=args.suite, floor=args.floor, limit=args.limit)
    table = markdown(rows)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "judges.md").write_text(table + "\n")
    (args.out / "judges.json").write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    print(f"wrote {args.out}/judges.md and judges.json")
    return 0
