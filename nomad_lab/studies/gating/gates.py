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
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.backends.backend_spec import DEFAULT_SPEC
from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.golden_suites import GATING_SUITES
from nomad_lab.data.refusal_kinds import OFF_TOPIC, REFUSAL_KINDS
from nomad_lab.eval.gating import RunData, gather, load_run, subset_run
from nomad_lab.eval.gating.fit import apply_gate, bank_run, default_bank, fit_gate, with_features
from nomad_lab.eval.gating.gate_spec_type import GATE_SPEC
from nomad_lab.eval.gating.inputs.verdicts import stratified_ids
from nomad_lab.gate import crossval
from nomad_lab.gate.apply import spec_needs
from nomad_lab.gate.crossval import Figures
from nomad_lab.gate.logistic_gate import LearnedGate, coefficient_rows, same_embedder
from nomad_lab.gate.spec import GateSpec, parse_gate_spec
from nomad_lab.retrieval.cross_encoder import DEFAULT_CROSS_ENCODER
from nomad_lab.studies.gating.gate_compare import (
    best_row,
    by_kind,
    headline_leak,
    leak_by_tag,
    paired_test,
    reaches_target,
)
from nomad_lab.studies.gating.gate_report import markdown, write
from nomad_lab.studies.gating.gate_rows import (
    SEED,
    Recipe,
    Row,
    finish_row,
    fit_rows,
    parse_fit,
    reference_row,
    score_curve,
    spec_row,
)
from nomad_lab.studies.gating.run_param import RUN, study_run
from nomad_lab.studies.params import CORPUS, EMBEDDER, GOLDENS, INDEX, STORE
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
)


def _splits(data: RunData, folds: int, repeats: int) -> list:
    """Repeated grouped folds over a run's questions (near-duplicates and refusal tag families together)."""
    refusal = data.pools.expect_refusal
    groups = crossval.question_groups(data.pools.tags, refusal, data.features.query)
    return crossval.repeated_splits((~refusal).astype(int), groups, folds, repeats, SEED)


def _judge_rows(p: Params, data: RunData, splits: list) -> list[Row]:
    """The judge's verdict and its P(true) swept, over every question or over ``--judge-sample``'s."""
    specs = list(dict.fromkeys([*(p.judge or []), *([p.judge_model] if p.judge_model else [])]))
    sample = None  # the questions judged, when only a sample is
    if p.judge_sample:
        sampled = set(stratified_ids(data.pools.ids, data.pools.expect_refusal, p.judge_sample))
        sample = np.array([i in sampled for i in data.pools.ids], dtype=bool)
        data = subset_run(data, sample)
        splits = _splits(data, p.folds, p.repeats)
    floor = None
    if p.judge_sample:
        floor = spec_row(
            p.store, data, parse_gate_spec("floor"), splits, "floor (swept), on the judge's sample"
        )
        floor.family, floor.subset = "sample", sample
    rows = []
    for spec in specs:
        verdict = parse_gate_spec(f"judge:{spec}")
        asks = spec == p.judge_model  # its missing verdicts are computed here (model calls)
        _, inputs = gather(p.store, data, verdict, progress=asks, judge=[spec] if asks else ())
        cached = next(iter(inputs.values()))
        if cached.missing:
            note = (
                f"not measured: {cached.missing} question(s) lack a cached verdict "
                f"(--judge-model {spec} makes the calls, one per question with a non-empty pool"
                + (f", of the --judge-sample {p.judge_sample}" if p.judge_sample else "")
                + ")"
            )
            rows.append(Row(f"judge {spec}", None, note=note, family="judge"))
            continue
        calls = float(np.mean(data.base_nonempty))
        ms = float(np.nanmedian(cached.ms)) if np.isfinite(cached.ms).any() else float("nan")
        for name, swept in ((f"judge {spec}: verdict", False), (f"judge {spec}: P(true) swept", True)):
            spec_value = GateSpec((replace(verdict.atoms[0], value=0.5),)) if swept else verdict
            row = spec_row(p.store, data, spec_value, splits, name + (" (sample)" if floor else ""))
            row.calls, row.ms, row.subset = calls, ms, sample
            if floor is not None:
                row.family = "sample"
                row.note = _sample_note(row, floor, data)
            rows.append(row)
    return rows + ([floor] if floor is not None and any(r.family == "sample" for r in rows) else [])


def _sample_note(row: Row, floor: Row, data: RunData) -> str:
    """Where a judge row on a sample stands against the floor on the same questions (paired)."""
    refusal = data.pools.expect_refusal
    test = paired_test(row, floor, refusal, data.base_recall)
    return (
        f"on a stratified sample of {data.pools.size} questions ({int(refusal.sum())} refusals), not "
        f"comparable with the rows on every question; against the floor on the same sample: leak "
        f"{test['leak']['difference']:+.1%} [{test['leak']['low']:+.1%}, {test['leak']['high']:+.1%}], "
        f"exact McNemar p {test['leakMcNemar']['p']:.2g}"
    )


def _model_free(row: Row) -> bool:
    """No model call and at most :data:`FREE_MS` per question: a gate any server can afford on every turn."""
    return row.calls == 0 and not row.ms > FREE_MS


def _transfer_row(p: Params, data: RunData, bank_path: Path | None, bank: RunData | None) -> Row | None:
    """A gate fitted elsewhere, applied unchanged (its own thresholds), scored only on questions it was
    not fitted on."""
    if not (p.transfer_run or p.transfer_gate or p.transfer_corpus):
        return None
    if bool(p.transfer_corpus) != bool(p.transfer_goldens):
        raise NomadLabError("study gates: --transfer-corpus and --transfer-goldens go together")
    if sum(bool(x) for x in (p.transfer_run, p.transfer_gate, p.transfer_corpus)) > 1:
        raise NomadLabError("study gates: give one of --transfer-run, --transfer-gate, --transfer-corpus")
    if p.transfer_gate:
        gate, source = LearnedGate.load(p.transfer_gate), str(p.transfer_gate)
    else:
        transfer_run = study_run(
            p, p.transfer_run, corpus=p.transfer_corpus, goldens=p.transfer_goldens, standalone=True
        )
        source_run = load_run(p.store, transfer_run)
        same_index = bank is not None and bank.pools.fingerprint == source_run.pools.fingerprint
        if bank_path and not (same_index and same_embedder(bank.embedder, source_run.embedder)):
            bank = bank_run(p.store, source_run, bank_path, p.transfer_bank_skip)  # the source's corpus
        gate = fit_gate(source_run, ("pool", "query"), bank, folds=p.folds, repeats=p.repeats, seed=SEED).gate
        source = f"corpus {p.transfer_corpus}" if p.transfer_corpus else f"run {transfer_run}"
    seen = set(gate.training.get("questionIds", []))
    unseen = np.array([i not in seen for i in data.pools.ids], dtype=bool)
    name = f"transfer: gate from {source}"
    if not unseen.any():
        return Row(
            name, None, note="every question of this run was in the gate's training run", family="transfer"
        )
    data = with_features(p.store, subset_run(data, unseen), gate.kinds)
    try:
        applied = apply_gate(gate, data)
    except NomadLabError as exc:
        return Row(name, None, note=f"refused: {exc}", family="transfer")
    scores = np.array([applied["scores"][i] for i in data.pools.ids])
    at_leak = gate.training.get("thresholdAtLeak")
    refusal = data.pools.expect_refusal
    figures = crossval.decision_figures(
        scores >= gate.threshold,
        None if at_leak is None else scores >= at_leak,
        data.base_recall,
        data.base_nonempty,
        refusal,
        crossval.auc_interval(scores[None], ~refusal),
    )
    figures.extra["score"] = scores[None]
    note = (
        f"fitted elsewhere, its own thresholds; scored on the {data.pools.size} questions it never saw "
        f"({int(refusal.sum())} refusals)"
    )
    if figures.recall_at_recall[0] < crossval.RECALL_TARGET:
        note += f"; its saved threshold misses recall@5 {crossval.RECALL_TARGET} on these questions"
    row = Row(name, figures, 0.0, applied["msPerQuestion"], note, family="transfer", subset=unseen)
    row.curve = score_curve(data, scores, "transfer")
    return finish_row(row)


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
    run_id = study_run(p, standalone=True)  # a follow-up is gated on its self-contained rewrite
    data = load_run(p.store, run_id)
    refusal = data.pools.expect_refusal
    if not refusal.any() or refusal.all():
        raise NomadLabError(f"study gates: run {run_id} needs both answerable and refusal questions")
    groups = crossval.question_groups(data.pools.tags, refusal, data.features.query)
    splits = _splits(data, p.folds, p.repeats)
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
        [Row("judge", None, note=judge_note, family="judge")] if judge_note else _judge_rows(p, data, splits)
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
    transfer = _transfer_row(p, data, bank_path, bank)
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
    }


def _figures_json(f: Figures) -> dict[str, Any]:
    from nomad_lab.eval.gating.fit import figures_json  # the gate file's own figure format

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
    markdown=lambda result, out=None: markdown(result, out, rows_json(result)),
    write=lambda result, out: write(result, out, rows_json(result)),
    out_dir="results/gates",
    command=argv(
        "study gates --reranker nanoranker --transfer-corpus datasets/corpora/pydocs/corpus "
        "--transfer-goldens datasets/corpora/pydocs/goldens --transfer-bank-skip coding --out results/gates"
    ),
    figures=("gates.png",),
    tables=("gates.md",),
    stage=12,
    budget_s=300.0,  # measured here: 93 s over a stored run with the caches, plus about 100 s to retrieve it
    params=PARAMS,
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
