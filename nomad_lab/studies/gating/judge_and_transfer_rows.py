"""The gate leaderboard's rows that need more than one spec over the run: the judges (their verdict and
P(true), on every question or on a stratified sample beside the floor on that sample) and the transfer
row (a gate fitted elsewhere, applied unchanged to the questions it never saw).

Why apart from the study (:mod:`nomad_lab.studies.gating.gates`): each reads its own options (the
judge's sample, the transfer's source) and builds its own comparison, while the study only decides
which rows a leaderboard holds and ranks them; a plain spec's row is
:func:`~nomad_lab.studies.gating.gate_rows.spec_row`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.eval.gating import RunData, gather, load_run, subset_run
from nomad_lab.eval.gating.fit import apply_gate, bank_run, fit_gate, with_features
from nomad_lab.eval.gating.inputs.verdicts import stratified_ids
from nomad_lab.gate import crossval
from nomad_lab.gate.logistic_gate import LearnedGate, same_embedder
from nomad_lab.gate.spec import GateSpec, parse_gate_spec
from nomad_lab.studies.gating.gate_compare import paired_test
from nomad_lab.studies.gating.gate_rows import SEED, Row, finish_row, score_curve, spec_row
from nomad_lab.studies.gating.run_param import GATED, study_run
from nomad_lab.studies.shape import Params


def question_splits(data: RunData, folds: int, repeats: int) -> list:
    """Repeated grouped folds over a run's questions (near-duplicates and refusal tag families together)."""
    return crossval.answerable_folds(data.pools, data.features.query, folds, repeats, SEED)[2]


def judge_rows(p: Params, data: RunData, splits: list) -> list[Row]:
    """The judge's verdict and its P(true) swept, over every question or over ``--judge-sample``'s."""
    specs = list(dict.fromkeys([*(p.judge or []), *([p.judge_model] if p.judge_model else [])]))
    sample = None  # the questions judged, when only a sample is
    if p.judge_sample:
        sampled = set(stratified_ids(data.pools.ids, data.pools.expect_refusal, p.judge_sample))
        sample = np.array([i in sampled for i in data.pools.ids], dtype=bool)
        data = subset_run(data, sample)
        splits = question_splits(data, p.folds, p.repeats)
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
                row.note = sample_note(row, floor, data)
            rows.append(row)
    return rows + ([floor] if floor is not None and any(r.family == "sample" for r in rows) else [])


def sample_note(row: Row, floor: Row, data: RunData) -> str:
    """Where a judge row on a sample stands against the floor on the same questions (paired)."""
    refusal = data.pools.expect_refusal
    test = paired_test(row, floor, refusal, data.base_recall)
    return (
        f"on a stratified sample of {data.pools.size} questions ({int(refusal.sum())} refusals), not "
        f"comparable with the rows on every question; against the floor on the same sample: leak "
        f"{test['leak']['difference']:+.1%} [{test['leak']['low']:+.1%}, {test['leak']['high']:+.1%}], "
        f"exact McNemar p {test['leakMcNemar']['p']:.2g}"
    )


def transfer_row(p: Params, data: RunData, bank_path: Path | None, bank: RunData | None) -> Row | None:
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
            p, p.transfer_run, corpus=p.transfer_corpus, goldens=p.transfer_goldens, **GATED
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
