"""The gate leaderboard: every gate family side by side on one stored run, out of fold, with intervals.

Rows: the score floor, the cosine floor and the contrast test (each swept over its grid), the judge's
verdict and P(true) (from cached verdicts only, unless ``--judge-model`` computes the missing ones), and
learned gates (logistic regression over the query embedding alone, the pool statistics alone, both,
and both with the out-of-scope bank as extra negatives), plus a transfer row (a gate fitted on another
run or read from a file, applied unchanged). Every operating point is chosen on training folds and
scored on held-out folds (:mod:`nomad_lab.gate.crossval`), fixed gates included, so the rows compare on
the same footing. Columns: leak at recall@5 >= 0.90, recall@5 at leak <= 5% (95% Clopper–Pearson
bound on the training folds), ROC AUC, model calls and milliseconds per question.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.backends.spec import DEFAULT_SPEC
from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE
from nomad_lab.eval.retrieve import RetrievalRequest, retrieve
from nomad_lab.gate import crossval, gates
from nomad_lab.gate.apply import spec_mask
from nomad_lab.gate.crossval import Figures
from nomad_lab.gate.families import FAMILIES, GateInputs, all_or_nothing
from nomad_lab.gate.features import pool_features
from nomad_lab.gate.learned import LearnedGate, coefficient_rows, same_embedder
from nomad_lab.gate.spec import parse_gate_spec
from nomad_lab.gate.sweep import OperatingCurve, curve_from_scores
from nomad_lab.store import Store
from nomad_lab.studies.gating.gate_data import (
    RunData,
    cached_verdicts,
    load_run,
    reranker_scores,
    subset_run,
)
from nomad_lab.studies.gating.gate_fit import (
    DEFAULT_KINDS,
    apply_gate,
    bank_run,
    default_bank,
    figures_json,
    fit_gate,
)
from nomad_lab.studies.gating.gate_report import markdown, write
from nomad_lab.studies.gating.judges import judge_run
from nomad_lab.studies.params import CORPUS, EMBEDDER, GOLDENS, STORE
from nomad_lab.studies.shape import Output, Param, Params, Study, argv, resolve_params

SEED = 1341
LEARNED = (  # (row name, feature kinds, with the bank)
    ("learned: query only", ("query",), False),
    ("learned: pool only", ("pool",), False),
    ("learned: pool + query", DEFAULT_KINDS, False),
    ("learned: pool + query + bank", DEFAULT_KINDS, True),
)


def _positive(value: int) -> str | None:
    return None if value >= 1 else "must be at least 1"


PARAMS = (
    Param("run", str, None, "stored retrieval run id (default: retrieve --suite at floor 0 now)"),
    STORE,
    CORPUS,
    GOLDENS,
    Param("suite", str, "core,off_topic", "suites to retrieve when no --run is given"),
    EMBEDDER,
    Param(
        "bank",
        Path,
        None,
        "out-of-scope question bank (default: datasets/out_of_scope/bank.jsonl if present)",
    ),
    Param("no_bank", bool, False, "leave the bank rows out", flag=True),
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
        "reranker", str, None, "trained reranker spec (nanoranker): a row for its best score over the top 5"
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


@dataclass
class Row:
    name: str
    figures: Figures | None
    calls: float = 0.0
    ms: float = float("nan")
    note: str = ""
    curve: OperatingCurve | None = field(default=None, repr=False)


def _retrieve(p: Params, corpus: Path | None = None, goldens: Path | None = None) -> str:
    """``--suite`` of the study's corpus (or of ``corpus``/``goldens``) at floor 0, stored; its run id."""
    config = RetrievalRequest(
        corpus_dir=Path(corpus or p.corpus),
        goldens_dir=Path(goldens or p.goldens),
        suite=p.suite,
        floor=0.0,
        store_path=Path(p.store),
        embedder=p.embedder,
        progress=False,
    )
    return retrieve(config).run_id


def _grid_row(name: str, data: RunData, spec: str, splits: list, inputs: GateInputs | None = None) -> Row:
    """A gate spec swept over its grid (or at its one point), out of fold."""
    parsed = parse_gate_spec(spec)
    started = time.perf_counter()
    points, mask = spec_mask(data.pools, parsed, inputs)
    per_question = (time.perf_counter() - started) / max(1, len(points) * data.pools.size)
    atom = parsed.atoms[0]
    score = atom.kind.score(data.pools, atom, inputs or GateInputs())
    return _mask_row(name, data, points, mask, score, splits, 1000 * per_question)


def _mask_row(
    name: str,
    data: RunData,
    points: np.ndarray,
    mask: np.ndarray,
    score: np.ndarray | None,
    splits: list,
    ms: float,
) -> Row:
    recall, nonempty = gates.evaluate(data.pools, mask)
    figures = crossval.grid_figures(recall, nonempty, data.pools.expect_refusal, splits, score)
    curve = curve_from_scores(data.pools, recall, nonempty, points, name, gates.DEFAULT_K)
    return Row(name, figures, 0.0, ms, curve=curve)


def _reference_row(data: RunData) -> Row:
    """The reference floor as shipped: one fixed point, nothing fitted, scored on every question."""
    pools = data.pools
    recall, nonempty = gates.evaluate_score_floors(pools, [RAG_MIN_FINAL_SCORE])
    score = parse_gate_spec("floor").atoms[0]
    top = score.kind.score(pools, score, GateInputs())
    figures = crossval.point_figures(recall[0], nonempty[0], pools.expect_refusal, top)
    return Row(
        f"floor@{RAG_MIN_FINAL_SCORE} (the reference, fixed)", figures, 0.0, note="in sample: nothing chosen"
    )


def _score_curve(data: RunData, scores: np.ndarray, name: str) -> OperatingCurve:
    points = np.unique(np.quantile(scores, np.linspace(0, 1, 101)))
    mask = all_or_nothing(scores, data.pools, points)
    return curve_from_scores(data.pools, *gates.evaluate(data.pools, mask), points, name, gates.DEFAULT_K)


def _learned_ms(data: RunData, gate: LearnedGate) -> float:
    """Pool features plus the gate's dot product, per question (the query vector is retrieval's own)."""
    started = time.perf_counter()
    pool_features(data.pools)
    apply_gate(gate, data)
    return 1000 * (time.perf_counter() - started) / max(1, data.pools.size)


def _judge_rows(p: Params, data: RunData, splits: list) -> list[Row]:
    specs = list(dict.fromkeys([*(p.judge or []), *([p.judge_model] if p.judge_model else [])]))
    if p.judge_model:
        with Store(p.store) as store:
            judge_run(store, data.run_id, p.judge_model, floor=0.0, progress=True)
    rows = []
    for spec in specs:
        cv = cached_verdicts(p.store, data, spec)
        if cv.missing:
            note = (
                f"not measured: {cv.missing} question(s) lack a cached verdict "
                f"(--judge-model {spec} makes the calls, one per question with a non-empty pool)"
            )
            rows.append(Row(f"judge {spec}", None, note=note))
            continue
        inputs = GateInputs(verdicts={spec: cv.verdicts}, p_true={spec: cv.p_true})
        calls = float(np.mean(data.base_nonempty))
        ms = float(np.nanmedian(cv.ms)) if np.isfinite(cv.ms).any() else float("nan")
        verdict = _grid_row(f"judge {spec}: verdict", data, f"judge:{spec}", splits, inputs)
        points = FAMILIES["judge"].grid()
        unjudged_kept = np.where(np.isnan(cv.p_true), np.inf, cv.p_true)  # no verdict: the pipeline keeps
        mask = all_or_nothing(unjudged_kept, data.pools, points)
        p_true = _mask_row(f"judge {spec}: P(true) swept", data, points, mask, cv.p_true, splits, ms)
        verdict.ms = ms
        verdict.calls = p_true.calls = calls
        rows += [verdict, p_true]
    return rows


def _reranker_row(p: Params, data: RunData, splits: list) -> Row:
    """The trained reranker's best score over the top-5 set as an all-or-nothing gate, swept."""
    scores, pairs, seconds = reranker_scores(p.store, data, p.reranker)
    points = np.unique(np.quantile(scores[np.isfinite(scores)], np.linspace(0, 1, 101)))
    mask = all_or_nothing(scores, data.pools, points)
    n = max(1, data.pools.size)
    row = _mask_row(f"reranker {p.reranker} (best of top 5, swept)", data, points, mask, scores, splits, 0.0)
    row.ms, row.calls = 1000 * seconds / n, pairs / n
    row.note = "calls: reranker (question, passage) pairs, on this CPU"
    return row


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
        transfer_run = p.transfer_run or _retrieve(p, p.transfer_corpus, p.transfer_goldens)
        source_run = load_run(p.store, transfer_run)
        same_index = bank is not None and bank.pools.fingerprint == source_run.pools.fingerprint
        if bank_path and not (same_index and same_embedder(bank.embedder, source_run.embedder)):
            bank = bank_run(p.store, source_run, bank_path, p.transfer_bank_skip)  # the source's corpus
        gate = fit_gate(source_run, DEFAULT_KINDS, bank, folds=p.folds, repeats=p.repeats, seed=SEED).gate
        source = f"corpus {p.transfer_corpus}" if p.transfer_corpus else f"run {transfer_run}"
    seen = set(gate.training.get("questionIds", []))
    unseen = np.array([i not in seen for i in data.pools.ids], dtype=bool)
    name = f"transfer: gate from {source}"
    if not unseen.any():
        return Row(name, None, note="every question of this run was in the gate's training run")
    data = subset_run(data, unseen)
    try:
        applied = apply_gate(gate, data)
    except NomadLabError as exc:
        return Row(name, None, note=f"refused: {exc}")
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
    note = (
        f"fitted elsewhere, its own thresholds; scored on the {data.pools.size} questions it never saw "
        f"({int(refusal.sum())} refusals)"
    )
    if figures.recall_at_recall[0] < crossval.RECALL_TARGET:
        note += f"; its saved threshold misses recall@5 {crossval.RECALL_TARGET} on these questions"
    row = Row(name, figures, 0.0, _learned_ms(data, gate), note)
    row.curve = _score_curve(data, scores, "transfer")
    return row


def compute(given: Mapping[str, Any] | Params) -> dict[str, Any]:
    """The leaderboard on one stored run (retrieved now when no run is given)."""
    p = given if isinstance(given, Params) else resolve_params(PARAMS, given, "study gates")
    started = time.perf_counter()
    run_id = p.run or _retrieve(p)
    data = load_run(p.store, run_id)
    refusal = data.pools.expect_refusal
    if not refusal.any() or refusal.all():
        raise NomadLabError(f"study gates: run {run_id} needs both answerable and refusal questions")
    labels = (~refusal).astype(int)
    groups = crossval.question_groups(data.pools.tags, refusal, data.features.query)
    splits = crossval.repeated_splits(labels, groups, p.folds, p.repeats, SEED)
    rows = [
        _grid_row("floor (swept)", data, "floor", splits),
        _grid_row("cosine floor (swept)", data, "cosine", splits),
        _grid_row("contrast (swept)", data, "contrast", splits),
    ]
    rows.append(_reference_row(data))
    rows += _judge_rows(p, data, splits)
    if p.reranker:
        rows.append(_reranker_row(p, data, splits))
    bank_path = None if p.no_bank else (p.bank or default_bank())
    bank = bank_run(p.store, data, bank_path, p.bank_skip) if bank_path else None
    fitted: dict[str, LearnedGate] = {}
    for name, kinds, with_bank in LEARNED:
        if with_bank and bank is None:
            continue
        result = fit_gate(
            data, kinds, bank if with_bank else None, folds=p.folds, repeats=p.repeats, seed=SEED
        )
        fitted[name] = result.gate
        row = Row(name, result.figures, 0.0, _learned_ms(data, result.gate))
        row.curve = _score_curve(data, result.oof[0], name)
        rows.append(row)
    transfer = _transfer_row(p, data, bank_path, bank)
    if transfer is not None:
        rows.append(transfer)
    best_name = LEARNED[3][0] if LEARNED[3][0] in fitted else LEARNED[2][0]
    best = fitted[best_name]
    return {
        "run": run_id,
        "questions": data.pools.size,
        "refusals": int(refusal.sum()),
        "answerable": int((~np.isnan(data.base_recall)).sum()),
        "recallNoGate": float(np.nanmean(data.base_recall)),
        "embedder": data.embedder,
        "bank": None if bank is None else {"path": str(bank_path), "questions": bank.pools.size},
        "groups": int(groups.max() + 1),
        "rows": rows,
        "gate": best,
        "gateName": best_name,
        "coefficients": coefficient_rows(best),
        "seconds": time.perf_counter() - started,
        "params": {k: str(v) if isinstance(v, Path) else v for k, v in p.as_dict().items() if k != "out"},
    }


def rows_json(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "gate": r.name,
            "calls": r.calls,
            "msPerQuestion": r.ms,
            "note": r.note,
            **({} if r.figures is None else figures_json(r.figures)),
        }
        for r in result["rows"]
    ]


STUDY = Study(
    name="gates",
    title="Gate leaderboard: floor, contrast, judge, learned gates, out of fold with intervals",
    run=compute,
    rows=rows_json,
    markdown=markdown,
    write=lambda result, out: write(result, out, rows_json(result)),
    out_dir="results/gates",
    command=argv(
        "study gates --reranker nanoranker --transfer-corpus datasets/corpora/pydocs/corpus "
        "--transfer-goldens datasets/corpora/pydocs/goldens --transfer-bank-skip coding --out results/gates"
    ),
    figures=("gates.png",),
    tables=("gates.md",),
    stage=12,
    budget_s=300.0,  # measured here: 114-166 s over a stored run, plus about 100 s to retrieve it
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
