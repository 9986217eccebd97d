"""``nomad-lab study …``: the measured experiments behind the seed's claims, one subcommand each.

Each subcommand declares its options here; running it is the same for all (:func:`run_study`): the
study registered under that name (``nomad_lab.studies.registry``) runs on the options, its rows go to
the store, its markdown is printed and its files written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nomad_lab.cli.recorded import recorded
from nomad_lab.cli.study_embedders import register_embedders
from nomad_lab.cli.study_gates import register_gates
from nomad_lab.cli.study_injection import register_injection
from nomad_lab.cli.workspace_args import (
    add_cluster_arguments,
    add_corpus_arguments,
    add_embedder_argument,
    add_progress_argument,
    add_store_argument,
    add_workspace_arguments,
    workspace_config,
)
from nomad_lab.core.workspace import DATASETS_DIR, RESULTS_DIR


def _out(parser: argparse.ArgumentParser, folder: str) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        default=RESULTS_DIR / folder,
        help="where the tables and plots go (default: %(default)s)",
    )


def _run_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--run",
        default=None,
        metavar="RUN_ID",
        help="judge this stored retrieval run (its pools) instead of retrieving again",
    )


PLACEMENT_BUDGET_S = 420.0
"""The placement study's share of the main job: three paired replays took about this long here."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("study", help="rerunnable experiments (estimator error, ...)")
    studies = parser.add_subparsers(dest="study", metavar="STUDY", required=True)
    estimator = studies.add_parser("estimator", help="token estimator error against real tokenizers")
    estimator.add_argument(
        "--datasets",
        type=Path,
        default=DATASETS_DIR,
        help="the datasets folder the samples are drawn from (corpus, goldens, estimator_samples)",
    )
    _out(estimator, "estimator")
    estimator.add_argument("--tokenizer", action="append", help="limit to this tokenizer (repeatable)")
    estimator.add_argument(
        "--from-rows",
        type=Path,
        default=None,
        help="re-summarize the real counts stored in this rows.csv instead of loading the tokenizers",
    )
    add_store_argument(estimator)
    estimator.set_defaults(func=run_study)
    judges = studies.add_parser(
        "judges", help="relevance judges against floor-only; their P(true) as a gate, agreement, cascade"
    )
    judges.add_argument(
        "--judge-model",
        action="append",
        required=True,
        metavar="SPEC",
        help="judge backend spec, e.g. embedded:gemma3-270m (repeatable: one row per model)",
    )
    judges.add_argument("--suite", default="off_topic", help="suite(s) to judge (default: off_topic)")
    judges.add_argument("--floor", type=float, default=0.0, help="the floor the judge runs after")
    judges.add_argument("--limit", type=int, default=None, help="judge only the first N questions")
    judges.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="N",
        help="judge a seeded stratified sample of N questions (half refusals); intervals cover the sample",
    )
    judges.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="leak target of the calibrated (floor, tau) (default: %(default)s)",
    )
    judges.add_argument(
        "--reask-confidence",
        action="store_true",
        help="ask again for cached verdicts stored before P(true) was read (otherwise they keep null)",
    )
    _out(judges, "judges")
    add_corpus_arguments(judges)
    add_store_argument(judges)
    add_progress_argument(judges)
    _run_option(judges)
    judges.add_argument(
        "--endpoint",
        action="append",
        default=[],
        metavar="SPEC=ENDPOINT",
        help="another server of the same judge model; each endpoint gets its own Dask worker (repeatable)",
    )
    add_cluster_arguments(judges)
    judges.set_defaults(func=run_judges)
    ladder = studies.add_parser("ladder", help="small GGUF judges by size: AUC, kappa, leak and recall")
    ladder.add_argument(
        "--judge-model",
        action="append",
        default=None,
        metavar="SPEC",
        help="judge spec (repeatable; default: the ladder, smallest to largest)",
    )
    ladder.add_argument("--suite", default="core,off_topic", help="suite(s) to judge (default: %(default)s)")
    ladder.add_argument("--sample", type=int, default=40, metavar="N", help="stratified sample size (0: all)")
    add_corpus_arguments(ladder)
    add_store_argument(ladder)
    add_progress_argument(ladder)
    _out(ladder, "judge_ladder")
    _run_option(ladder)
    ladder.set_defaults(func=run_ladder)
    per_passage = studies.add_parser("per-passage", help="one judge call per passage vs one per set, paired")
    per_passage.add_argument("--judge-model", required=True, metavar="SPEC", help="judge backend spec")
    per_passage.add_argument("--suite", default="core,off_topic", help="suite(s) (default: %(default)s)")
    per_passage.add_argument("--floor", type=float, default=0.0, help="the floor the judge runs after")
    per_passage.add_argument("--sample", type=int, default=30, metavar="N", help="stratified sample (0: all)")
    add_corpus_arguments(per_passage)
    add_store_argument(per_passage)
    add_progress_argument(per_passage)
    _out(per_passage, "judge_per_passage")
    _run_option(per_passage)
    per_passage.set_defaults(func=run_per_passage)
    placement = studies.add_parser("placement", help="prefill per turn for tail vs front RAG placement")
    placement.add_argument("--model", default=None, help="GGUF path (default: the embedded Gemma 3 270M)")
    add_corpus_arguments(placement, goldens=False)
    placement.add_argument("--turns", type=int, default=16, help="conversation turns replayed (default 16)")
    placement.add_argument(
        "--context-window", type=int, default=8192, help="the model's context window (default 8192)"
    )
    placement.add_argument(
        "--repeats",
        type=int,
        default=6,
        help="at most N paired tail/front replays (at least 3; more only until the front/tail interval is "
        "within ±5%%); the median per turn",
    )
    placement.add_argument(
        "--budget",
        type=float,
        default=PLACEMENT_BUDGET_S,
        metavar="S",
        help=f"start no new replay after S seconds (default {PLACEMENT_BUDGET_S:.0f}, measured)",
    )
    _out(placement, "placement")
    add_store_argument(placement)
    placement.set_defaults(func=run_study)
    growth = studies.add_parser("growth", help="off-topic leak and recall as the distractor library grows")
    growth.add_argument(
        "--books", type=int, nargs="+", default=[3, 6, 9, 15], help="library-growth books added, per size"
    )
    growth.add_argument("--floor", type=float, nargs="+", default=[0.0, 0.55, 0.62], help="floors to report")
    growth.add_argument(
        "--judge-model",
        default="embedded:gemma3-270m",
        metavar="SPEC",
        help="judge backend spec (%(default)s)",
    )
    growth.add_argument("--judge-floor", type=float, default=0.62, help="the floor the judge runs after")
    growth.add_argument("--no-judge", action="store_true", help="floors only")
    growth.add_argument(
        "--library",
        type=Path,
        default=None,
        help="folder the added documents come from (default: datasets/library_growth; a large one: "
        "`nomad-lab library build`); --books counts its documents, sorted by name",
    )
    growth.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="leak target of the floor calibrated at each size (%(default)s)",
    )
    add_embedder_argument(growth)
    _out(growth, "library_growth")
    add_corpus_arguments(growth)
    add_store_argument(growth)
    add_progress_argument(growth)
    growth.set_defaults(func=run_study)
    transport = studies.add_parser(
        "transport", help="tokens processed: native /api/chat vs /v1 (real Ollama)"
    )
    transport.add_argument("--host", help="Ollama host (default: $OLLAMA_HOST)")
    transport.add_argument("--model", required=True, help="a model installed on that server")
    transport.add_argument("--num-ctx", type=int, default=8192, help="the window the native path sends")
    transport.add_argument("--prompt-chars", type=int, default=24_000, help="length of the long prompt")
    add_corpus_arguments(transport, goldens=False)
    transport.add_argument("--out", type=Path, default=None, help="also write transport.json here")
    transport.set_defaults(func=run_study)
    register_injection(studies, run_study)
    register_embedders(studies)
    register_gates(studies, run_study)
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
    _out(rewrite, "rewrite")
    rewrite.set_defaults(func=run_rewrite)


def run_study(args: argparse.Namespace, **extra: Any) -> int:
    """Any registered study: its options as parameters, rows stored, markdown printed, files written."""
    from nomad_lab.studies.registry import get
    from nomad_lab.studies.shape import execute

    study = get(args.study)
    params = {k: v for k, v in vars(args).items() if k not in ("func", "study", "out", "command")} | extra
    result, paths = execute(study, params, args.out, getattr(args, "store", None))
    print(study.markdown(result))
    for name, path in paths.items():
        print(f"wrote {name}: {path}")
    return 0


@recorded
def run_kv_window(args: argparse.Namespace) -> int:
    from nomad_lab.studies.budgeting.kv_window import run

    print(run(args.out, args.available_gib, args.model_gib))
    print(f"wrote {args.out}")
    return 0


@recorded
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


@recorded
def run_judges(args: argparse.Namespace) -> int:
    """The judges study with its missing verdicts computed first, here or on a Dask cluster."""
    from nomad_lab.runners.cluster import dask_client, verdict_filler
    from nomad_lab.studies.gating import judge_confidence
    from nomad_lab.studies.gating.judges import markdown, run_judge_study, write_study

    endpoints = _endpoints(args.endpoint, args.judge_model)
    judged_runs: list = []
    with dask_client(args.scheduler, args.workers) as client:
        # A stratified sample is judged in-process: the cluster filler would judge every question.
        filler = (
            None
            if args.sample
            else verdict_filler(
                client, args.judge_model, floor=args.floor, limit=args.limit, endpoints=endpoints
            )
        )
        rows = run_judge_study(
            args.judge_model,
            suite=args.suite,
            floor=args.floor,
            limit=args.limit,
            **workspace_config(args),
            fill_missing=filler,
            sample=args.sample,
            reask_confidence=args.reask_confidence,
            judged_runs=judged_runs,
            run_id=args.run,
        )
    print(markdown(rows))
    for name, path in write_study(rows, args.out).items():
        print(f"wrote {name}: {path}")
    for judged in judged_runs:
        study = judge_confidence.run_confidence_study(judged, alpha=args.alpha)
        print(judge_confidence.markdown(study))
        for name, path in judge_confidence.write_confidence_study(study, args.out).items():
            print(f"wrote {name}: {path}")
    return 0


@recorded
def run_ladder(args: argparse.Namespace) -> int:
    import json

    from nomad_lab.studies.gating import judge_confidence
    from nomad_lab.studies.gating.judges import run_judge_study

    judged_runs: list = []
    run_judge_study(
        args.judge_model or list(judge_confidence.LADDER),
        suite=args.suite,
        **workspace_config(args),
        sample=args.sample or None,
        judged_runs=judged_runs,
        run_id=args.run,
    )
    rows = [judge_confidence.ladder_row(judged) for judged in judged_runs]
    text = judge_confidence.ladder_markdown(rows, sampled=bool(args.sample))
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ladder.md").write_text(text)
    (args.out / "ladder.json").write_text(json.dumps(rows, indent=2, default=float) + "\n")
    print(f"wrote {args.out / 'ladder.md'} and ladder.json")
    return 0


@recorded
def run_per_passage(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from nomad_lab.eval.retrieve import RetrievalRequest, retrieve
    from nomad_lab.store import Store
    from nomad_lab.studies.gating.per_passage import compare_per_passage, markdown

    config = RetrievalRequest(
        corpus_dir=args.corpus,
        goldens_dir=args.goldens,
        suite=args.suite,
        floor=args.floor,
        store_path=args.store,
        progress=not args.no_progress,
    )
    run_id = args.run or retrieve(config).run_id
    with Store(args.store) as store:
        row = compare_per_passage(
            store,
            run_id,
            args.judge_model,
            floor=args.floor,
            sample=args.sample or None,
            progress=not args.no_progress,
        )
    text = markdown([row], sampled=bool(args.sample))
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "per_passage.md").write_text(text)
    (args.out / "per_passage.json").write_text(json.dumps(asdict(row), indent=2, default=float) + "\n")
    print(f"wrote {args.out / 'per_passage.md'} and per_passage.json")
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
