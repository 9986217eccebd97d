"""``nomad-lab eval retrieval``: the retrieval tier, as the reference's ``eval:retrieval`` (SPEC §8.2, §8.5).

Prints the aggregate metrics with 95% intervals, per-tag leak rates and the leaked cases with their top
scores; stores the run and every question's full pre-floor candidate pool in the workspace store.
Exit code 1 when a retrieved chunk does not resolve to a corpus document (a filter leak), as the
reference does, or when the corpus or goldens are invalid.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def _floor(text: str) -> float:
    """The floor, range-checked by the same function as every study's ``--floor``."""
    from nomad_lab.studies.params import in_unit_interval

    value = float(text)
    problem = in_unit_interval(value)
    if problem:
        raise argparse.ArgumentTypeError(f"floor {problem}")
    return value


def register(subparsers: Any) -> None:
    from nomad_lab.backends.backend_spec import BACKEND_SPEC
    from nomad_lab.cli.study import forms_line
    from nomad_lab.cli.workspace_args import add_embedder_argument, add_workspace_arguments
    from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE

    parser = subparsers.add_parser("retrieval", help="retrieval metrics, leak rates and candidate pools")
    parser.add_argument(
        "--floor",
        type=_floor,
        default=RAG_MIN_FINAL_SCORE,
        help="post-rerank relevance floor (0 = off) (default: %(default)s)",
    )
    parser.add_argument("--top-k", type=int, default=5, help="chunks returned per question (default 5)")
    parser.add_argument(
        "--judge-model",
        metavar="SPEC",
        help=f"relevance judge backend spec; one of: {forms_line(BACKEND_SPEC)}",
    )
    parser.add_argument(
        "--judge-retry-failed", action="store_true", help="re-ask cached verdicts that failed open"
    )
    parser.add_argument(
        "--dump", type=Path, metavar="PATH", help="write the candidate pools (reference JSON format)"
    )
    add_workspace_arguments(parser)
    add_embedder_argument(parser)
    parser.add_argument(
        "--ablate", action="store_true", help="also score dense only, +rerank and +diversity side by side"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nomad_lab.cli.workspace_args import workspace_config
    from nomad_lab.eval.ablation import ablation_markdown
    from nomad_lab.eval.retrieval_eval import RetrievalEvalConfig, format_summary, run_retrieval_eval
    from nomad_lab.eval.separation import separation_markdown

    config = RetrievalEvalConfig(
        suite=args.suite,
        floor=args.floor,
        top_k=args.top_k,
        judge_model=args.judge_model,
        judge_retry_failed=args.judge_retry_failed,
        dump_path=args.dump,
        embedder=args.embedder,
        index=args.index,
        ablate=args.ablate,
        **workspace_config(args),
    )
    result = run_retrieval_eval(config)  # bad input raises a NomadLabError: cli.main prints it, exit 1
    print(format_summary(result))
    print(
        "\nScore separation (returned chunks):\n" + separation_markdown(result.report.extra["distributions"])
    )
    if result.ablation is not None:
        print("\nAblation (no floor in any arm):\n" + ablation_markdown(result.ablation))
    return 1 if result.unresolved_chunks else 0
