"""``nomad-lab gate fit`` / ``gate apply``: learn a gate from a stored run's labelled questions, use it.

``gate fit --run RUN --out gates/x.json`` fits a logistic gate over the run's features (by default the
training folds choose between pool statistics alone and pool statistics with the query embedding),
prints its out-of-fold figures (grouped, repeated folds; the feature set and thresholds picked inside
training folds) and saves a small JSON gate file. ``gate apply gates/x.json --run RUN`` scores another
run with it (refused when that run was embedded by another embedder). Python: ``eval.gating.fit``.
``RUN`` is a stored run's value: a run id, ``main`` or ``latest`` (the default), refused at the edge when
malformed and resolved by :func:`nomad_lab.eval.gating.runs.resolve_run` before any model loads.

``gate export GATE_FILE --to ts`` writes one self-contained TypeScript module for the reference server
(``--to json``: the portable gate :mod:`nomad_lab.gate.runtime` loads); ``--bundle DIR`` writes a folder
with the cross-encoder a gate reads and a drop-in for the reference's relevance judge
(:mod:`nomad_lab.gate.bundle`); a gate reading a judge is refused in one line.
``gate export sufficiency:GATE_FILE|zero-shot@T --action note|drop`` exports the sufficiency check the
same ways (``--to json``: :mod:`nomad_lab.gate.portable_sufficiency`; ``--bundle DIR``: its body, head and
``sufficiency_check.ts``), with its action and the prompt note's text.
``gate export floor[@F] --run RUN --to ts`` writes the floor as a ``RAG_MIN_FINAL_SCORE`` snippet for the
run's embedder (``floor``: its balanced preset).

``gate fit --no-labels --corpus DIR --out gates/x.json`` needs no goldens: questions drafted from the
corpus's headings and sentences stand in for in-domain questions and the out-of-scope bank for off-topic
ones; it prints the floor's label-free threshold and saves a gate fitted that way, its threshold set on
the drafted questions' recall@5 (``eval.gating.label_free_thresholds``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from nomad_lab.cli.workspace_args import add_corpus_arguments, add_store_argument, add_stored_run_argument


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("gate", help="fit a learned gate on a stored run, or apply one")
    sub = parser.add_subparsers(dest="gate_command", metavar="GATE_COMMAND")
    fit = sub.add_parser("fit", help="fit a learned gate (out-of-fold figures) and save it as JSON")
    add_stored_run_argument(fit, "the labelled run it is fitted on (main: over --corpus)")
    fit.add_argument("--out", type=Path, required=True, help="gate file to write, e.g. gates/minilm.json")
    fit.add_argument(
        "--features",
        default="auto",
        help="feature kinds, comma-joined (pool, query, judge, and any gathered kind such as ce or "
        "coverage); '|' between sets lets the training folds choose (pool|pool,ce); "
        "auto: pool|pool,query (default: %(default)s)",
    )
    fit.add_argument(
        "--bank", type=Path, help="out-of-scope question bank as extra negatives (golden .jsonl)"
    )
    fit.add_argument("--no-bank", action="store_true", help="do not use the default bank even if it exists")
    fit.add_argument(
        "--bank-skip",
        nargs="+",
        default=[],
        metavar="CATEGORY",
        help="bank categories your corpus answers, left out of the negatives (coding for programming docs)",
    )
    fit.add_argument(
        "--negatives",
        choices=("all", "off-topic"),
        default="all",
        help="the refusals it learns to reject: all, or off-topic only (a topicality gate: unanswerable and "
        "near-domain refusals retrieve on-topic passages) (default: %(default)s)",
    )
    fit.add_argument(
        "--no-labels",
        action="store_true",
        help="no goldens: questions drafted from --corpus as on-topic, the bank as off-topic",
    )
    add_corpus_arguments(fit, goldens=False)  # --no-labels drafts its questions from --corpus
    fit.add_argument("--folds", type=int, default=5, help="outer folds (default: %(default)s)")
    fit.add_argument("--repeats", type=int, default=5, help="repeated fold draws (default: %(default)s)")
    add_store_argument(fit)
    fit.set_defaults(func=run_fit)
    apply = sub.add_parser("apply", help="apply a saved gate file to a stored run")
    apply.add_argument("gate_file", type=Path, help="a gate file written by gate fit")
    add_stored_run_argument(apply, "the run it scores")
    apply.add_argument("--threshold", type=float, help="P(on topic) threshold (default: the file's)")
    apply.add_argument("--scores", type=Path, help="also write every question's score as JSON here")
    add_store_argument(apply)
    apply.set_defaults(func=run_apply)
    export = sub.add_parser(
        "export", help="write a gate for a pipeline: a TypeScript module or portable JSON"
    )
    export.add_argument(
        "gate",
        help="a gate file written by gate fit, floor@F / floor (the run's preset), or a sufficiency check "
        "sufficiency:GATE_FILE[@T] / sufficiency:zero-shot@T",
    )
    export.add_argument("--to", choices=("ts", "json"), default="ts", help="target (default: %(default)s)")
    export.add_argument("--out", type=Path, help="file to write (default: standard output)")
    export.add_argument(
        "--bundle",
        type=Path,
        metavar="DIR",
        help="with --to ts: write a folder for the reference server (gate module, the cross-encoder it "
        "reads, package.json, the drop-in relevance check, README); needed for a cross-encoder gate",
    )
    export.add_argument(
        "--model-path",
        metavar="DIR",
        help="with --bundle: the folder the server keeps model.onnx and tokenizer.json in (not copied)",
    )
    export.add_argument(
        "--action",
        choices=("note", "drop"),
        default="note",
        help="for sufficiency:...: what the pipeline does when no passage states the answer",
    )
    add_stored_run_argument(export, "for floor: the run whose embedder (and preset) it is for")
    add_store_argument(export)
    export.set_defaults(func=run_export)
    parser.set_defaults(func=lambda _args: parser.print_help() or 2)


def _triple(t: Any) -> str:
    return "n/a" if t is None else f"{t[0]:.3f} [{t[1]:.3f}, {t[2]:.3f}]"


def run_fit_without_labels(args: argparse.Namespace) -> int:
    from nomad_lab.core.errors import NomadLabError
    from nomad_lab.eval.gating.fit import default_bank
    from nomad_lab.eval.gating.label_free_thresholds import fit_label_free, pseudo_run, spec_point

    if args.run:
        raise NomadLabError("gate fit --no-labels: --run names a labelled run; leave it out")
    bank_path = args.bank or default_bank()
    if args.no_bank or bank_path is None:
        raise NomadLabError("gate fit --no-labels: the bank's questions are its only negatives; keep a bank")
    kinds = ("pool", "coverage") if args.features.strip() == "auto" else tuple(args.features.split(","))
    if any("|" in k for k in kinds):
        raise NomadLabError("gate fit --no-labels: one feature set (no '|': no labels to choose by)")
    pseudo = pseudo_run(args.store, args.corpus, progress=True)
    points, index, reached = spec_point(args.store, pseudo, "floor")
    fitted = fit_label_free(args.store, pseudo, kinds, bank_path, args.bank_skip, folds=args.folds)
    miss = "" if reached else " (the target is out of reach on these questions: the loosest point)"
    print(
        f"{pseudo.pools.size} pseudo-questions drafted from {args.corpus} (run {pseudo.run_id}), "
        f"{fitted.bank.pools.size} bank questions as negatives; no labels used"
    )
    print(f"label-free floor for recall@5 >= 0.9: {points[index]:.3f}{miss}")
    path = fitted.gate.save(args.out)
    auc = fitted.gate.figures["pseudoVsBankRocAuc"]
    print(
        f"wrote {path} (features {'+'.join(kinds)}, threshold {fitted.gate.threshold:.4f} from the "
        f"pseudo-questions; pseudo vs bank ROC AUC {_triple(auc)})"
    )
    return 0


def run_fit(args: argparse.Namespace) -> int:
    if args.no_labels:
        return run_fit_without_labels(args)
    from nomad_lab.data.refusal_kinds import KINDS
    from nomad_lab.eval.gating import load_run
    from nomad_lab.eval.gating.fit import CANDIDATE_KINDS, bank_run, default_bank, fit_gate, with_features
    from nomad_lab.eval.gating.runs import parse_stored_run, resolve_run

    sets = (
        CANDIDATE_KINDS
        if args.features.strip() == "auto"
        else [tuple(k.strip() for k in part.split(",") if k.strip()) for part in args.features.split("|")]
    )
    needed = sorted({k for s in sets for k in s})
    run_id = resolve_run(args.store, parse_stored_run(args.run), corpus=args.corpus)  # before any model
    data = with_features(args.store, load_run(args.store, run_id), needed, progress=True)
    bank_path = None if args.no_bank else (args.bank or default_bank())
    bank = bank_run(args.store, data, bank_path, args.bank_skip) if bank_path else None
    if bank is not None:
        bank = with_features(args.store, bank, needed)
    negatives = None if args.negatives == "all" else (args.negatives,)
    result = fit_gate(data, sets, bank, folds=args.folds, repeats=args.repeats, negatives=negatives)
    path = result.gate.save(args.out)
    f = result.gate.figures
    refusals = int(data.pools.expect_refusal.sum())
    extra = f", bank {bank.pools.size} extra negatives" if bank else ", no bank"
    taught = "every refusal" if negatives is None else "off-topic refusals only"
    print(
        f"fitted on run {data.run_id}: {data.pools.size} questions, {refusals} refusals{extra}; taught to "
        f"reject {taught}"
    )
    print(f"out of fold ({f['repeats']}x{f['folds']}-fold, grouped): ROC AUC {_triple(f['rocAuc'])}")
    print(f"  at recall@5 >= {f['recallTarget']}: recall@5 {_triple(f['recallAtRecallTarget'])}")
    for kind, figures in f["byKind"].items():
        what = KINDS[kind].axis if kind in KINDS else "pass rate"
        print(f"    {kind} refusals (n = {figures['n']}): {what} {_triple(figures['passAtRecallTarget'])}")
    print(
        f"  at leak <= {f['leakTarget']} over all {refusals} refusals (95% bound): recall@5 "
        f"{_triple(f['recallAtLeakTarget'])}, leak {_triple(f['leakAtLeakTarget'])}"
    )
    chosen = result.gate.training["featureSetsChosenPerFold"]
    if len(chosen) > 1:
        print("  feature set chosen per training fold: " + ", ".join(f"{k} {v}" for k, v in chosen.items()))
    print(
        f"wrote {path} (features {'+'.join(result.gate.kinds)}, threshold {result.gate.threshold:.4f}, "
        f"{result.seconds:.1f} s)"
    )
    return 0


def run_export(args: argparse.Namespace) -> int:
    import shlex
    import sys

    from nomad_lab.eval.gating.export import export_text

    run = ["--run", str(args.run)] if args.run else []
    action = ["--action", args.action] if str(args.gate).startswith("sufficiency:") else []
    argv = ["gate", "export", str(args.gate), "--to", args.to, *action, *run]
    command = "written by: nomad-lab " + shlex.join(argv)
    if args.bundle is not None or args.model_path is not None:
        return _export_bundle(args, command)
    text = export_text(args.store, args.gate, args.to, command, args.run, args.action)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _export_bundle(args: argparse.Namespace, command: str) -> int:
    import sys

    from nomad_lab.core.errors import NomadLabError
    from nomad_lab.eval.gating.export import export_bundle

    if args.bundle is None:
        raise NomadLabError("gate export: --model-path goes with --bundle DIR")
    if args.to != "ts" or args.out is not None:
        raise NomadLabError("gate export: --bundle writes a TypeScript folder (--to ts, no --out)")
    command += f" --bundle {args.bundle}"
    written = export_bundle(args.store, args.gate, args.bundle, command, args.model_path, args.action)
    size = sum(p.stat().st_size for p in written)
    print(f"wrote {args.bundle} ({len(written)} files, {size / 1e6:.1f} MB)", file=sys.stderr)
    return 0


def run_apply(args: argparse.Namespace) -> int:
    import time

    from nomad_lab.eval.gating import load_run, scores
    from nomad_lab.eval.gating.fit import applied_figures
    from nomad_lab.eval.gating.runs import parse_stored_run, resolve_run
    from nomad_lab.gate.logistic_gate import LearnedGate

    gate = LearnedGate.load(args.gate_file)
    run_id = resolve_run(args.store, parse_stored_run(args.run))  # before the embedder loads
    data = load_run(args.store, run_id, embed="query" in gate.kinds)
    started = time.perf_counter()
    values = scores(args.store, data, f"learned:{args.gate_file}")  # the learned: family, as every door
    out = applied_figures(gate, data, values, time.perf_counter() - started, args.threshold)
    if out["inSample"]:
        label = " (in sample: the gate was fitted on every question of this run)"
    elif out["seenInTraining"]:
        label = f" (counting the {out['questions']} questions it was not fitted on)"
    else:
        label = ""
    print(f"gate {args.gate_file} on run {out['run']}{label}, threshold {out['threshold']:.4f}:")
    if out["leak"] is not None:
        print(f"  leak {out['leak']:.3f} ({out['leaked']}/{out['refusals']} refusals)")
    if out["recall@5"] is not None:
        print(f"  recall@5 {out['recall@5']:.3f}")
    print(f"  {out['msPerQuestion']:.3f} ms per question, no model call")
    if args.scores:
        args.scores.parent.mkdir(parents=True, exist_ok=True)
        args.scores.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {args.scores}")
    return 0
