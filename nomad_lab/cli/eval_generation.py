"""``nomad-lab eval generation``: answers scored per mode, as the reference's ``eval:generation`` (SPEC §8.3).

Prints each mode's aggregate (correctness, refusal, leakage, think-tag leak, markdown, numeric grounding,
prompt budget, token-estimate error), the cases that flipped between repeats, and with ``--all-modes``
the oracle/e2e/noretrieval decomposition and its verdict. Answers are stored as they come: rerun the same
command after a crash or Ctrl-C and only the missing answers are computed. Exit code 1 when a case
errored, 130 when interrupted; invalid inputs (goldens, corpus, store, options, an unreachable model) are
``NomadLabError``s, printed by the CLI as one line with exit code 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def register(subparsers: Any) -> None:
    from nomad_lab.backends.backend_spec import BACKEND_SPEC
    from nomad_lab.cli.study import forms_line
    from nomad_lab.cli.workspace_args import add_embedder_argument, add_workspace_arguments
    from nomad_lab.core.reference import RAG_PLACEMENTS, RAG_TAIL
    from nomad_lab.core.samplers import RESPONSE_STYLES
    from nomad_lab.eval.generation import DEFAULT_GENERATION_MODEL, GENERATION_MODES, LONG_CONTEXT_WINDOW

    parser = subparsers.add_parser("generation", help="score generated answers (oracle / e2e / noretrieval)")
    parser.add_argument(
        "--model",
        default=DEFAULT_GENERATION_MODEL,
        metavar="SPEC",
        help=f"chat backend spec, or 'mock' (no model: answers are the injected context). "
        f"Default {DEFAULT_GENERATION_MODEL}. Specs: {forms_line(BACKEND_SPEC)}",
    )
    parser.add_argument("--tasks-model", metavar="SPEC", help="backend spec of the query-rewrite model")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--mode", choices=GENERATION_MODES, default="e2e", help="default e2e")
    modes.add_argument("--all-modes", action="store_true", help="run all three and print the decomposition")
    parser.add_argument("--repeats", type=_positive, default=3, help="answers per question (default 3)")
    parser.add_argument("--limit", type=_positive, help="only the first N goldens (after --tag)")
    parser.add_argument("--tag", help="only goldens carrying this tag")
    parser.add_argument(
        "--style", choices=RESPONSE_STYLES, help="sample with a response style instead of temperature 0"
    )
    parser.add_argument(
        "--context-window",
        type=_positive,
        metavar="N",
        help="pin the window for every case (default: resolved)",
    )
    parser.add_argument(
        "--long-context-window",
        type=_positive,
        default=LONG_CONTEXT_WINDOW,
        metavar="N",
        help=f"window of long-context goldens without --context-window (default {LONG_CONTEXT_WINDOW})",
    )
    parser.add_argument(
        "--rag-placement",
        choices=RAG_PLACEMENTS,
        default=RAG_TAIL,
        help=f"where the retrieved block goes in the prompt, RAG_PLACEMENT (default: {RAG_TAIL})",
    )
    parser.add_argument(
        "--token-ratio", type=float, default=1.0, help="planner token ratio k (default 1: uncalibrated)"
    )
    parser.add_argument(
        "--num-predict-cap",
        type=_positive,
        metavar="N",
        help="cap answer tokens below the planner's numPredict",
    )
    parser.add_argument(
        "--sub-billion-tier",
        action="store_true",
        help="read 'M' parameter sizes for the chunk tier (the reference treats them as 8B)",
    )
    parser.add_argument(
        "--skip-rewrite", action="store_true", help="retrieve with the raw last message (no query rewrite)"
    )
    parser.add_argument("--fresh", action="store_true", help="ignore stored answers and recompute them")
    add_workspace_arguments(parser, report_what="reports, one per mode")
    add_embedder_argument(parser)
    parser.add_argument("--verbose", action="store_true", help="print every failing question and its answer")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nomad_lab.cli.workspace_args import workspace_config
    from nomad_lab.eval.generation import (
        GENERATION_MODES,
        GenerationEvalConfig,
        decomposition,
        format_failures,
        format_mode_summary,
        run_generation_eval,
    )

    try:
        config = GenerationEvalConfig(
            model=args.model,
            tasks_model=args.tasks_model,
            suite=args.suite,
            modes=GENERATION_MODES if args.all_modes else (args.mode,),
            repeats=args.repeats,
            limit=args.limit,
            tag=args.tag,
            style=args.style,
            context_window=args.context_window,
            long_context_window=args.long_context_window,
            rag_placement=args.rag_placement,
            token_ratio=args.token_ratio,
            num_predict_cap=args.num_predict_cap,
            read_million_sizes=args.sub_billion_tier,
            skip_query_rewrite=args.skip_rewrite,
            fresh=args.fresh,
            embedder=args.embedder,
            index=args.index,
            **workspace_config(args),
        )
        result = run_generation_eval(config)
    except KeyboardInterrupt:
        print(
            "eval generation: interrupted; every finished answer is stored: rerun the same command to resume",
            file=sys.stderr,
        )
        return 130

    style = f"style={config.style}" if config.style else "style=deterministic (temp 0, seed 42)"
    print(
        f"Corpus {result.fingerprint} · {result.goldens} goldens · model={config.model} · "
        f"repeats={config.repeats} · {style}"
    )
    if config.is_mock:
        print(
            "Mock model: answers are the injected context verbatim — the extractive ceiling for the current "
            "retrieval, not a real model."
        )
    print()
    for mode in result.modes:
        print(format_mode_summary(mode))
        if args.verbose:
            print("\n".join(format_failures(mode)))
        print()
    if len(result.modes) > 1:
        print("\n".join(decomposition({m.mode: m.aggregate.correctness for m in result.modes})))
    if result.modes and config.report_dir is not None:
        print(
            "\nBaselines are per mode: nomad-lab eval compare REPORT --promote generation-<mode>, "
            "later: nomad-lab eval compare REPORT --name generation-<mode>"
        )
    return 1 if result.errors else 0
