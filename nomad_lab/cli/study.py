"""``nomad-lab study …``: the measured experiments behind the seed's claims, one subcommand each."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nomad_lab.cli.study_injection import register_injection
from nomad_lab.cli.workspace_args import add_cluster_arguments, add_workspace_arguments
from nomad_lab.core.workspace import DATASETS_DIR, DEFAULT_CORPUS_DIR, RESULTS_DIR


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("study", help="rerunnable experiments (estimator error, ...)")
    studies = parser.add_subparsers(dest="study", metavar="STUDY", required=True)
    estimator = studies.add_parser("estimator", help="token estimator error against real tokenizers")
    estimator.add_argument("--datasets", type=Path, default=DATASETS_DIR, help="datasets directory (samples)")
    estimator.add_argument("--out", type=Path, default=RESULTS_DIR / "estimator", help="results directory")
    estimator.add_argument("--tokenizer", action="append", help="limit to this tokenizer (repeatable)")
    estimator.add_argument(
        "--from-rows",
        type=Path,
        default=None,
        help="re-summarize the real counts stored in this rows.csv instead of loading the tokenizers",
    )
    estimator.set_defaults(func=run_estimator)
    judges = studies.add_parser("judges", help="relevance judge models against floor-only, paired tests")
    judges.add_argument("--judge-model", action="append", required=True, metavar="SPEC", help="repeatable")
    judges.add_argument("--suite", default="off_topic")
    judges.add_argument("--floor", type=float, default=0.0, help="the floor the judge runs after")
    judges.add_argument("--limit", type=int, default=None, help="judge only the first N questions")
    judges.add_argument("--out", type=Path, default=RESULTS_DIR / "judges")
    judges.add_argument(
        "--endpoint",
        action="append",
        default=[],
        metavar="SPEC=ENDPOINT",
        help="another server of the same judge model; each endpoint gets its own Dask worker (repeatable)",
    )
    add_cluster_arguments(judges)
    judges.set_defaults(func=run_judges)
    placement = studies.add_parser("placement", help="prefill per turn for tail vs front RAG placement")
    placement.add_argument("--model", default=None, help="GGUF path (default: the embedded Gemma 3 270M)")
    placement.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS_DIR)
    placement.add_argument("--turns", type=int, default=16)
    placement.add_argument("--context-window", type=int, default=8192)
    placement.add_argument("--repeats", type=int, default=3, help="replays per series; the median per turn")
    placement.add_argument("--out", type=Path, default=RESULTS_DIR / "placement")
    placement.set_defaults(func=run_placement)
    growth = studies.add_parser("growth", help="off-topic leak and recall as the distractor library grows")
    growth.add_argument(
        "--books", type=int, nargs="+", default=[3, 6, 9, 15], help="library-growth books added, per size"
    )
    growth.add_argument("--floor", type=float, nargs="+", default=[0.0, 0.55, 0.62], help="floors to report")
    growth.add_argument("--judge-model", default="embedded:gemma3-270m", metavar="SPEC")
    growth.add_argument("--judge-floor", type=float, default=0.62, help="the floor the judge runs after")
    growth.add_argument("--no-judge", action="store_true", help="floors only")
    growth.add_argument("--out", type=Path, default=RESULTS_DIR / "library_growth")
    growth.set_defaults(func=run_growth)
    transport = studies.add_parser(
        "transport", help="tokens processed: native /api/chat vs /v1 (real Ollama)"
    )
    transport.add_argument("--host", help="Ollama host (default: $OLLAMA_HOST)")
    transport.add_argument("--model", required=True, help="a model installed on that server")
    transport.add_argument("--num-ctx", type=int, default=8192, help="the window the native path sends")
    transport.add_argument("--prompt-chars", type=int, default=24_000, help="length of the long prompt")
    transport.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS_DIR)
    transport.add_argument("--out", type=Path, default=None, help="also write transport.json here")
    transport.set_defaults(func=run_transport)
    register_injection(studies)
    kv = studies.add_parser("kv-window", help="context window before/after per-layer KV accounting")
    kv.add_argument("--available-gib", type=float, default=16.0, help="memory budget the window must fit")
    kv.add_argument("--model-gib", type=float, default=4.0, help="weights sharing that memory")
    kv.add_argument("--out", type=Path, default=RESULTS_DIR / "kv_window" / "table.md", help="markdown table")
    kv.set_defaults(func=run_kv_window)
    rewrite = studies.add_parser("rewrite", help="recall@5 with the free-text vs structured query rewrite")
    add_workspace_arguments(rewrite)
    rewrite.set_defaults(suite="core,long_context")
    rewrite.add_argument(
        "--tasks-model", default="embedded:gemma3-270m", help="backend spec of the tasks model"
    )
    rewrite.add_argument("--out", type=Path, default=RESULTS_DIR / "rewrite", help="results directory")
    rewrite.set_defaults(func=run_rewrite)


def run_estimator(args: argparse.Namespace) -> int:
    from nomad_lab.studies.budgeting.estimator import markdown, rows_from_csv, run, summarize, write

    if args.from_rows is not None:
        rows = rows_from_csv(args.from_rows, args.datasets)
        summary = summarize(rows)
        paths = write(rows, summary, args.out)
    else:
        summary, paths = run(args.datasets, args.out, args.tokenizer)
    print(markdown(summary))
    for name, path in paths.items():
        print(f"wrote {name}: {path}")
    return 0


def run_kv_window(args: argparse.Namespace) -> int:
    from nomad_lab.studies.budgeting.kv_window import run

    print(run(args.out, args.available_gib, args.model_gib))
    print(f"wrote {args.out}")
    return 0


def run_rewrite(args: argparse.Namespace) -> int:
    from nomad_lab.eval.rewrite import markdown, run

    summary = run(
        corpus_dir=args.corpus,
        goldens_dir=args.goldens,
        suite=args.suite,
        store_path=args.store,
        out_dir=args.out,
        tasks_model=args.tasks_model,
        progress=not args.no_progress,
    )
    print(markdown(summary))
    print(f"wrote {args.out}")
    return 0


def run_placement(args: argparse.Namespace) -> int:
    from nomad_lab.studies.budgeting.prefill import load_or_run, markdown, write

    result = load_or_run(
        args.out,
        args.corpus,
        turns=args.turns,
        context_window=args.context_window,
        model=args.model,
        recompute=True,
        repeats=args.repeats,
    )
    write(result, args.out)
    print(markdown(result))
    print(f"wrote {args.out}/placement.json, placement.md and prefill_vs_turn.png/.svg")
    return 0


def run_growth(args: argparse.Namespace) -> int:
    from nomad_lab.studies.gating.growth import markdown, run_growth_study, write

    judge = None if args.no_judge else args.judge_model
    rows = run_growth_study(args.books, floors=args.floor, judge_model=judge, judge_floor=args.judge_floor)
    print(markdown(rows, judge))
    for name, path in write(rows, judge, args.out).items():
        print(f"wrote {name}: {path}")
    return 0


def run_transport(args: argparse.Namespace) -> int:
    import json

    from nomad_lab.studies.budgeting.transport import long_prompt, markdown, measure, resolve_host

    url = resolve_host(args.host)
    result = measure(url, args.model, long_prompt(args.corpus, args.prompt_chars), args.num_ctx)
    print(markdown(result))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "transport.json").write_text(json.dumps(result.to_json(), indent=2) + "\n")
    return 0


def run_judges(args: argparse.Namespace) -> int:
    from nomad_lab.runners.cluster import dask_client, verdict_filler
    from nomad_lab.studies.gating.judges import markdown, run_judge_study, write_study

    endpoints = _endpoints(args.endpoint, args.judge_model)
    with dask_client(args.scheduler, args.workers) as client:
        rows = run_judge_study(
            args.judge_model,
            suite=args.suite,
            floor=args.floor,
            limit=args.limit,
            fill_missing=verdict_filler(
                client, args.judge_model, floor=args.floor, limit=args.limit, endpoints=endpoints
            ),
        )
    print(markdown(rows))
    for name, path in write_study(rows, args.out).items():
        print(f"wrote {name}: {path}")
    return 0


def _endpoints(pairs: list[str], specs: list[str]) -> dict[str, list[str]]:
    """``SPEC=ENDPOINT`` options grouped by judge spec; a spec not in ``--judge-model`` is refused."""
    from nomad_lab.core.errors import NomadLabError

    grouped: dict[str, list[str]] = {}
    for pair in pairs:
        spec, sep, endpoint = pair.partition("=")
        if not sep or not endpoint or spec not in specs:
            raise NomadLabError(
                f"--endpoint {pair}: expected SPEC=ENDPOINT where SPEC is one of the --judge-model values"
            )
        grouped.setdefault(spec, [spec]).append(endpoint)
    return grouped
