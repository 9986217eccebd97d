"""``nomad-lab store import``, ``store calls``, ``store export-cache`` and ``store import-cache``.

Why ``import``: a dump written elsewhere (the reference's ``eval:retrieval --dump``, a colleague's run)
becomes a stored run that gate studies read like any other. The dump is read and validated in full
before the store is opened, so a corrupt or foreign file never creates, locks or changes the store.
Why ``calls``: every chat call (judge, rewrite, answer, warm-up) is logged in the store; this lists the
latest calls and the totals per model and purpose, read-only (an older store is listed, not upgraded).
Why ``runs``: a notebook takes a run (``run = "main"``: the main job's run of the default corpus); this lists
what a store holds (id, date, corpus folder, suites, embedder, questions) and which run ``main`` means.
Why ``export-cache``/``import-cache``: pair scores (cross-encoder, reranker) and judge verdicts are model
outputs keyed by model identity and exact input, valid in any store (``nomad_lab.store.cache_files``); a
committed file spares the main job an hour of model passes, and whatever it lacks is still computed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from nomad_lab.cli.workspace_args import add_store_argument


def register(subparsers: Any) -> None:
    from nomad_lab.cli.workspace_args import add_store_argument

    parser = subparsers.add_parser(
        "store", help="the workspace store: import candidate dumps, list model calls"
    )
    actions = parser.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    importer = actions.add_parser(
        "import", help="store candidate pools (reference --dump JSON, pool JSONL or Parquet) as a run"
    )
    importer.add_argument("dump", type=Path, help="a reference dump, or a pool file (docs/pools.md)")
    importer.add_argument(
        "--format", choices=("dump", "jsonl", "parquet"), help="the file's format (default: detected)"
    )
    add_store_argument(importer)
    importer.set_defaults(func=run_import)
    register_calls(actions)
    register_runs(actions)
    register_caches(actions)


def register_runs(actions: Any) -> None:
    """``store runs``: the stored retrieval runs, read-only, and which one ``main`` means."""
    from nomad_lab.cli.workspace_args import add_corpus_arguments

    runs = actions.add_parser("runs", help="list the stored retrieval runs and which one notebooks read")
    add_store_argument(runs)
    add_corpus_arguments(runs, goldens=False)
    runs.set_defaults(func=run_runs)


def run_runs(args: argparse.Namespace) -> int:
    """Every run (its corpus recognised among the default corpus and ``--corpus``), ``main`` marked:
    the main job's run over ``--corpus``."""
    from nomad_lab.core.first_run import first_run_line
    from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR
    from nomad_lab.eval.stored_runs import list_runs, main_run, runs_table
    from nomad_lab.store import Store

    if not Path(args.store).is_file():
        print(first_run_line(f"{args.store}: no store yet, so no runs", args.corpus))
        return 0
    with Store(args.store, read_only=True) as store:
        runs = list_runs(store, list(dict.fromkeys([Path(args.corpus), DEFAULT_CORPUS_DIR])))
        main = main_run(store, args.corpus)
    print(runs_table(runs, main, args.corpus))
    return 0


def register_caches(actions: Any) -> None:
    """``store export-cache TABLE --out FILE`` and ``store import-cache FILE...``."""
    from nomad_lab.store.cache_files import CACHE_TABLES

    exporter = actions.add_parser("export-cache", help="write a model-output cache table to a portable file")
    exporter.add_argument("table", choices=sorted(CACHE_TABLES), help="which cache")
    exporter.add_argument("--out", type=Path, required=True, help="the .jsonl.gz file to write")
    exporter.add_argument(
        "--key", action="append", default=[], help="only this model's rows (scorer / judge model as stored)"
    )
    add_store_argument(exporter)
    exporter.set_defaults(func=run_export_cache)
    importer = actions.add_parser("import-cache", help="add a cache file's rows the store lacks")
    importer.add_argument("files", type=Path, nargs="+", help=".jsonl.gz files written by export-cache")
    add_store_argument(importer)
    importer.set_defaults(func=run_import_cache)


def run_export_cache(args: argparse.Namespace) -> int:
    from nomad_lab.eval.provenance import provenance_record, write_provenance
    from nomad_lab.store import Store

    with Store(args.store, read_only=True) as store:
        count = store.export_cache(args.table, args.out, args.key)
    write_provenance(args.out.parent, provenance_record(), file=args.out.name)  # the command beside the file
    print(f"wrote {count} {args.table} rows from {args.store} to {args.out}")
    return 0


def run_import_cache(args: argparse.Namespace) -> int:
    from nomad_lab.store import Store
    from nomad_lab.store.cache_files import read_cache_file

    caches = [read_cache_file(path) for path in args.files]  # all checked before the store is opened
    with Store(args.store) as store:
        for cache in caches:
            added = store.import_cache(cache)
            print(f"{cache.path}: {added} of {len(cache.rows)} {cache.table} rows were new to {args.store}")
    return 0


def register_calls(actions: Any) -> None:
    """``store calls``: a read-only listing of the call log (``--store`` as the workspace option reads)."""

    calls = actions.add_parser("calls", help="list logged model calls and their totals per model and purpose")
    add_store_argument(calls)
    calls.add_argument("--model", help="only calls to this model (as logged)")
    calls.add_argument("--purpose", help="only calls for this purpose: judge, rewrite, answer, warmup, ...")
    calls.add_argument("--limit", type=int, default=20, help="list this many of the latest calls")
    calls.set_defaults(func=run_calls)


def run_import(args: argparse.Namespace) -> int:
    from nomad_lab.data.pool_files import read_pool_file
    from nomad_lab.data.pool_format import disabled_by_missing
    from nomad_lab.store import Store

    fmt, content = read_pool_file(args.dump, args.format)  # errors name file:line; store not opened yet
    with Store(args.store) as store:
        if fmt == "dump":
            run_id, count = store.import_dump(content, source=str(args.dump)), len(content["pools"])
        else:
            run_id, count = store.import_pools(content), content.size
    print(f"imported {count} pools from {args.dump} ({fmt}) as run {run_id} into {args.store}")
    if fmt != "dump":
        names = ", ".join(sorted(content.scores)) or "none"
        print(
            f"  {content.candidates} candidates; columns {', '.join(content.columns) or 'none'}; "
            f"scores {names}"
        )
        for line in disabled_by_missing(content.columns):
            print(f"  {line}")
    return 0


def run_calls(args: argparse.Namespace) -> int:
    from nomad_lab.store import Store

    with Store(args.store, read_only=True) as store:  # an older store is read as it is: maybe no log yet
        logged = store.has_call_log()
        totals = store.model_call_totals() if logged else []
        calls = (
            store.model_calls(model=args.model, purpose=args.purpose, limit=max(args.limit, 0))
            if logged
            else []
        )
    print(format_calls(totals, calls))
    return 0


def format_calls(totals: list[dict[str, Any]], calls: list[Any]) -> str:
    """The totals table, then one line per listed call (oldest first)."""
    if not totals:
        return "no model calls logged"
    lines = ["model · purpose · calls · failed · prompt tokens · completion tokens · mean ms · max ms"]
    for t in totals:
        lines.append(
            f"{t['model']} · {t['purpose']} · {t['calls']} · {t['failures']} · {t['promptTokens'] or 0} · "
            f"{t['completionTokens'] or 0} · {t['meanMs']:.0f} · {t['maxMs']:.0f}"
        )
    lines.append("")
    for c in calls:
        outcome = "ok" if c.ok else f"failed: {c.failure}"
        lines.append(
            f"{c.created_at:%Y-%m-%d %H:%M:%S} {c.model} {c.purpose} {c.request_sha256[:12]} "
            f"prompt={c.prompt_tokens} completion={c.completion_tokens} {c.ms:.0f}ms {outcome}"
        )
    return "\n".join(lines)
