"""``nomad-lab study …``: the measured experiments behind the seed's claims, one subcommand each.

Each subcommand declares its options here; running it is the same for all (:func:`run_study`): the
study registered under that name (``nomad_lab.studies.registry``) runs on the options, its rows go to
the store, its markdown is printed and its files written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nomad_lab.cli.study_injection import register_injection
from nomad_lab.cli.workspace_args import add_cluster_arguments
from nomad_lab.core.workspace import DATASETS_DIR, DEFAULT_CORPUS_DIR, RESULTS_DIR

PLACEMENT_BUDGET_S = 420.0
"""The placement study's share of the main job: three paired replays took about this long here."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("study", help="rerunnable experiments (estimator error, ...)")
    studies = parser.add_subparsers(dest="study", metavar="STUDY", required=True)
    estimator = studies.add_parser("estimator", help="token estimator error against real tokenizers")
    estimator.add_argument("--datasets", type=Path, default=DATASETS_DIR)
    estimator.add_argument("--out", type=Path, default=RESULTS_DIR / "estimator")
    estimator.add_argument("--tokenizer", action="append", help="limit to this tokenizer (repeatable)")
    estimator.set_defaults(func=run_study)
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
    placement.add_argument("--out", type=Path, default=RESULTS_DIR / "placement")
    placement.set_defaults(func=run_study)
    growth = studies.add_parser("growth", help="off-topic leak and recall as the distractor library grows")
    growth.add_argument(
        "--books", type=int, nargs="+", default=[3, 6, 9, 15], help="library-growth books added, per size"
    )
    growth.add_argument("--floor", type=float, nargs="+", default=[0.0, 0.55, 0.62], help="floors to report")
    growth.add_argument("--judge-model", default="embedded:gemma3-270m", metavar="SPEC")
    growth.add_argument("--judge-floor", type=float, default=0.62, help="the floor the judge runs after")
    growth.add_argument("--no-judge", action="store_true", help="floors only")
    growth.add_argument("--out", type=Path, default=RESULTS_DIR / "library_growth")
    growth.set_defaults(func=run_study)
    transport = studies.add_parser(
        "transport", help="tokens processed: native /api/chat vs /v1 (real Ollama)"
    )
    transport.add_argument("--host", help="Ollama host (default: $OLLAMA_HOST)")
    transport.add_argument("--model", required=True, help="a model installed on that server")
    transport.add_argument("--num-ctx", type=int, default=8192, help="the window the native path sends")
    transport.add_argument("--prompt-chars", type=int, default=24_000, help="length of the long prompt")
    transport.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS_DIR)
    transport.add_argument("--out", type=Path, default=None, help="also write transport.json here")
    transport.set_defaults(func=run_study)
    register_injection(studies, run_study)


def run_study(args: argparse.Namespace, **extra: Any) -> int:
    """Any registered study: its options as parameters, rows stored, markdown printed, files written."""
    from nomad_lab.studies.registry import get
    from nomad_lab.studies.shape import execute

    study = get(args.study)
    params = {k: v for k, v in vars(args).items() if k not in ("func", "study", "out")} | extra
    result, paths = execute(study, params, args.out, getattr(args, "store", None))
    print(study.markdown(result))
    for name, path in paths.items():
        print(f"wrote {name}: {path}")
    return 0


def run_judges(args: argparse.Namespace) -> int:
    """The judges study with its missing verdicts computed first, here or on a Dask cluster."""
    from nomad_lab.runners.cluster import dask_client, verdict_filler

    endpoints = _endpoints(args.endpoint, args.judge_model)
    with dask_client(args.scheduler, args.workers) as client:
        filler = verdict_filler(
            client, args.judge_model, floor=args.floor, limit=args.limit, endpoints=endpoints
        )
        return run_study(args, fill_missing=filler)


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
