"""The gate leaderboard: a list of gate specs and fitted-gate recipes, side by side on one stored run.

Rows come from two lists. **Specs** (``floor``, ``cosine``, ``contrast``, ``judge:SPEC``,
``rerank:SPEC``, ``ce:SPEC``, any ``--gate``) are evaluated by the gating service over their whole
operating range; **fits** (feature kinds, with or without the out-of-scope bank) are logistic gates
fitted and scored out of fold, the feature set chosen inside the training folds where several are
given. Every operating point is chosen on training folds and scored on held-out folds
(:mod:`nomad_lab.gate.crossval`), fixed gates included. Each row reports the out-of-fold recall it
actually reaches at its training-chosen recall point beside its leak there (a row that falls short is
flagged), the leak where its curve reaches the recall target (the same recall for every row), ROC AUC,
calls and milliseconds per question; the best row is tested against the floor, paired over the same
refusals.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.backends.backend_spec import DEFAULT_SPEC
from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.golden_suites import GATING_SUITES
from nomad_lab.data.refusal_kinds import OFF_TOPIC, REFUSAL_KINDS
from nomad_lab.eval.gating import RunData, load_run
from nomad_lab.eval.gating.fit import (
    bank_run,
    default_bank,
    figures_json,
)
from nomad_lab.eval.gating.gate_spec_type import GATE_SPEC
from nomad_lab.gate import crossval
from nomad_lab.gate.apply import spec_needs
from nomad_lab.gate.crossval import Figures
from nomad_lab.gate.logistic_gate import coefficient_rows
from nomad_lab.gate.spec import parse_gate_spec
from nomad_lab.retrieval.cross_encoder import DEFAULT_CROSS_ENCODER
from nomad_lab.studies.gating.gate_compare import (
    best_row,
    by_kind,
    headline_leak,
    leak_by_tag,
    paired_test,
    reaches_target,
)
from nomad_lab.studies.gating.gate_report import report
from nomad_lab.studies.gating.gate_rows import (
    Recipe,
    Row,
    fit_rows,
    parse_fit,
    reference_row,
    spec_row,
)
from nomad_lab.studies.gating.judge_and_transfer_rows import judge_rows, question_splits, transfer_row
from nomad_lab.studies.gating.run_param import GATED, RUN, study_run
from nomad_lab.studies.params import CORPUS, EMBEDDER, GOLDENS, INDEX, PROGRESS, STORE
from nomad_lab.studies.shape import Output, Param, Params, Study, argv, resolve_params, stored_params

FREE_MS = 1.0
"""Milliseconds per question under which a gate without a model call counts as free (the cheap row)."""
SPECS = ("floor", "cosine", "contrast")
"""The no-call gates every leaderboard sweeps; judges, rerankers and ``--gate`` specs join them."""
CROSS_ENCODER = f"ce:{DEFAULT_CROSS_ENCODER}"
"""The cross-encoder row every leaderboard ranks (``--no-ce`` leaves it and its fits out)."""
FITS: tuple[Recipe, ...] = (
    ((("query",),), False, None),
    ((("pool",),), False, None),
    ((("pool", "query"),), False, None),
    ((("pool", "query"),), True, None),
    ((("pool", "coverage"),), False, None),
    ((("pool", "coverage"),), True, None),
    ((("pool", "coverage"),), True, (OFF_TOPIC,)),
)
"""Fitted rows with no model call (:data:`~nomad_lab.studies.gating.gate_rows.Recipe`); ``--fit`` adds
more. Those fitted on off-topic refusals only (``topical``) answer the reference's question alone; the
blended fits beside them learn to reject on-topic unanswerable questions too."""
CE_FITS: tuple[Recipe, ...] = (
    ((("pool", "ce"),), True, None),
    ((("pool", "ce"),), True, (OFF_TOPIC,)),
    ((("pool", "coverage", "ce"),), True, None),
    ((("pool", "coverage", "ce"),), True, (OFF_TOPIC,)),
    ((("pool",), ("pool", "coverage"), ("pool", "coverage", "ce")), True, None),
)
"""Fitted rows that read the cross-encoder (the last lets the training folds choose the feature set)."""


def _positive(value: int) -> str | None:
    return None if value >= 1 else "must be at least 1"


PARAMS = (
    RUN,
    STORE,
    CORPUS,
    GOLDENS,
    Param("suite", str, GATING_SUITES, "suites to retrieve when no --run is given (NAME? is optional)"),
    EMBEDDER,
    INDEX,
    Param(
        "bank",
        Path,
        None,
        "out-of-scope question bank (default: datasets/out_of_scope/bank.jsonl if present)",
    ),
    Param("no_bank", bool, False, "leave the bank rows out", flag=True),
    Param("no_ce", bool, False, "leave the cross-encoder row and the fits that read it out", flag=True),
    Param(
        "bank_skip",
        str,
        (),
        "bank categories this corpus answers, left out of the negatives (e.g. coding for programming docs)",
        many=True,
        metavar="CATEGORY",
    ),
    Param(
        "judge",
        str,
        [DEFAULT_SPEC],
        "judge spec(s) whose cached verdicts make rows (no model call; a judge without them is listed)",
        many=True,
    ),
    Param("judge_model", str, None, "judge spec to run on questions without a cached verdict (model calls)"),
    Param(
        "judge_sample",
        int,
        None,
        "judge rows on a stratified sample of this many questions (half refusals, seeded), beside the floor "
        "on the same sample, instead of on every question (a small model's call costs seconds)",
        check=_positive,
    ),
    Param(
        "reranker", str, None, "trained reranker spec (nanoranker): a row for its best score over the top 5"
    ),
    Param(
        "gate",
        GATE_SPEC,
        (),
        "more gate specs to rank (ce:SPEC, floor@0.5+judge:SPEC, ...)",
        many=True,
        metavar="SPEC",
    ),
    Param(
        "fit",
        str,
        (),
        "more fitted rows: comma-joined feature kinds (pool,ce,coverage); '|' between sets lets the training "
        "folds choose (pool|pool,ce); a trailing ',bank' adds the bank's negatives",
        many=True,
        metavar="KINDS",
    ),
    Param("transfer_run", str, None, "fit the pool + query gate on this run, apply it to --run"),
    Param(
        "transfer_corpus",
        Path,
        None,
        "retrieve --suite over this other corpus (with --transfer-goldens) and fit the transfer gate on it",
    ),
    Param("transfer_goldens", Path, None, "the golden suites of --transfer-corpus"),
    Param(
        "transfer_bank_skip",
        str,
        (),
        "bank categories the transfer source answers, left out of its negatives",
        many=True,
        metavar="CATEGORY",
    ),
    Param("transfer_gate", Path, None, "apply this saved gate file to --run as the transfer row"),
    Param("folds", int, crossval.FOLDS, "outer folds", check=_positive),
    Param("repeats", int, crossval.REPEATS, "repeated fold draws", check=_positive),
    PROGRESS,
)


def _model_free(row: Row) -> bool:
    """No model call and at most :data:`FREE_MS` per question: a gate any server can afford on every turn."""
    return row.calls == 0 and not row.ms > FREE_MS


def _unfed(data: RunData, names: list[str]) -> str | None:
    """Why the run cannot feed these families or input kinds (an imported pool file's missing column), or
    None: such a row is listed as not measured instead of failing the leaderboard."""
    lacked = [n for n in dict.fromkeys(names) if n in data.lacking]
    return "not measured: " + "; ".join(f"{n}: {data.lacking[n]}" for n in lacked) if lacked else None


def _spec_or_note(p: Params, data: RunData, text: str, splits: list) -> Row:
    spec = parse_gate_spec(text)
    note = _unfed(data, [*(a.family for a in spec.atoms), *(n.kind for n in spec_needs(spec))])
    return (
        Row(text, None, note=note, family=spec.atoms[0].family)
        if note
        else spec_row(p.store, data, spec, splits)
    )


def compute(given: Mapping[str, Any] | Params) -> dict[str, Any]:
    """The leaderboard on one stored run (retrieved now when no run is given)."""
    p = given if isinstance(given, Params) else resolve_params(PARAMS, given, "study gates")
    started = time.perf_counter()
    run_id = study_run(p, **GATED)
    data = load_run(p.store, run_id)
    refusal = data.pools.expect_refusal
    if not refusal.any() or refusal.all():
        raise NomadLabError(f"study gates: run {run_id} needs both answerable and refusal questions")
    groups = crossval.question_groups(data.pools.tags, refusal, data.features.query)
    splits = question_splits(data, p.folds, p.repeats)
    specs = [
        *SPECS,
        *([f"rerank:{p.reranker}"] if p.reranker else []),
        *([] if p.no_ce else [CROSS_ENCODER]),
        *map(str, p.gate),
    ]
    rows = [_spec_or_note(p, data, s, splits) for s in specs[:3]]
    rows.append(reference_row(data))
    judge_note = _unfed(data, ["judge"])
    rows += (
        [Row("judge", None, note=judge_note, family="judge")] if judge_note else judge_rows(p, data, splits)
    )
    rows += [_spec_or_note(p, data, s, splits) for s in specs[3:]]
    default = None if data.corpus_dir is None else default_bank()  # an imported run has no corpus to ask
    bank_path = None if p.no_bank else (p.bank or default)
    bank = bank_run(p.store, data, bank_path, p.bank_skip) if bank_path else None
    fits = list(  # a --fit that repeats a built-in recipe makes one row, not two
        dict.fromkeys([*FITS, *([] if p.no_ce else CE_FITS), *(parse_fit(f) for f in p.fit)])
    )
    for kinds, *_ in fits:
        note = _unfed(data, [k for s in kinds for k in s])
        if note:
            rows.append(
                Row(f"learned: {' | '.join('+'.join(s) for s in kinds)}", None, note=note, family="learned")
            )
    fed = [fit for fit in fits if not _unfed(data, [k for s in fit[0] for k in s])]
    fitted_rows, fitted = fit_rows(p.store, data, bank, fed, p.folds, p.repeats)
    rows += fitted_rows
    transfer = transfer_row(p, data, bank_path, bank)
    if transfer is not None:
        rows.append(transfer)
    for row in rows:
        if row.figures is not None and not reaches_target(row) and "fixed" not in row.name:
            reached = row.figures.recall_at_recall[0]
            row.note = (row.note + "; " if row.note else "") + (
                f"out-of-fold recall@5 {reached:.3f} falls short of {crossval.RECALL_TARGET:.2f}"
            )
    kinds = data.pools.refusal_kinds
    headline = kinds == OFF_TOPIC
    best = best_row(rows, headline)
    free = best_row([r for r in rows if _model_free(r)], headline)
    floor = rows[0]
    by_name = {r.name: r for r in rows}
    gate_name = min(fitted, key=lambda n: headline_leak(by_name[n], headline))  # the file users apply
    present = [k for k in REFUSAL_KINDS if (kinds == k).any()]
    return {
        "run": run_id,
        "questions": data.pools.size,
        "refusals": int(refusal.sum()),
        "refusalsByKind": {k: int((kinds == k).sum()) for k in REFUSAL_KINDS},
        "headlineKind": OFF_TOPIC,
        "ids": list(data.pools.ids),
        "kinds": [str(k) for k in kinds],
        "answerable": int((~np.isnan(data.base_recall)).sum()),
        "recallNoGate": float(np.nanmean(data.base_recall)),
        "embedder": data.embedder,
        "bank": None if bank is None else {"path": str(bank_path), "questions": bank.pools.size},
        "groups": int(groups.max() + 1),
        "rows": rows,
        "best": None if best is None else best.name,
        "bestWithoutModelCall": None if free is None else free.name,
        "bestVsFloor": None
        if best is None
        else {k: paired_test(best, floor, kinds == k, data.base_recall) for k in present},
        "bestByTag": None if best is None else leak_by_tag(best, data.pools.tags, kinds),
        "gate": fitted[gate_name],
        "gateName": gate_name,
        "coefficients": coefficient_rows(fitted[gate_name]),
        "seconds": time.perf_counter() - started,
        "params": stored_params(p.as_dict()),
        "out": p.out if "out" in p else None,  # the folder its page names (the study's --out)
    }


def _figures_json(f: Figures) -> dict[str, Any]:
    return figures_json(f)


def rows_json(result: dict[str, Any]) -> list[dict[str, Any]]:
    kinds = np.array(result["kinds"], dtype=object)
    return [
        {
            "gate": r.name,
            "family": r.family,
            "byKind": by_kind(r, r.covers(kinds)),
            "calls": r.calls,
            "msPerQuestion": r.ms,
            "note": r.note,
            "reachesRecallTarget": reaches_target(r),
            "onCurveAtRecallTarget": None
            if r.at_target is None
            else {"leak": r.at_target[0], "recall": r.at_target[1]},
            **({} if r.figures is None else _figures_json(r.figures)),
        }
        for r in result["rows"]
    ]


STUDY = Study(
    name="gates",
    title="Gate leaderboard: floor, contrast, judge, rerankers, learned gates, out of fold with intervals",
    run=compute,
    rows=rows_json,
    result=lambda raw: report(raw, rows_json(raw)),
    command=argv(
        "study gates --reranker nanoranker --transfer-corpus datasets/corpora/pydocs/corpus "
        "--transfer-goldens datasets/corpora/pydocs/goldens --transfer-bank-skip coding --out results/gates"
    ),
    figures=("gates.png",),
    stage=12,
    budget_s=300.0,  # measured here: 93 s over a stored run with the caches, plus about 100 s to retrieve it
    also=(
        Output(
            "Gate leaderboard on a second corpus (pydocs: Python tutorial and MDN), with a gate fitted on "
            "the default corpus as its transfer row",
            argv(
                "study gates --corpus datasets/corpora/pydocs/corpus "
                "--goldens datasets/corpora/pydocs/goldens --reranker nanoranker --bank-skip coding "
                "--transfer-corpus datasets/corpus --transfer-goldens datasets/goldens "
                "--out results/gates/pydocs"
            ),
            "results/gates/pydocs",
            ("gates.png",),
            ("gates.md",),
        ),
    ),
)
