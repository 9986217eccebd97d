"""The per-passage judge the seed measured and rejected, compared paired with the one-verdict judge.

Per passage: one judge call for each passage of the set, keeping the passages judged on topic. One
verdict: one call for the whole set, keeping all or none. Both read the same sets (what retrieval
returns at the run's floor) through the same verdict cache (a one-passage set is just another judge
input), so leak, recall@5, calls and latency are compared question by question: exact McNemar on leaks,
paired bootstrap on recall. The seed lost 9-17 points of recall@5 per passage; this measures it here.

``nomad-lab study per-passage`` (the module's ``_`` is the command's ``-``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from nomad_lab.backends import Backend
from nomad_lab.eval.gating.inputs.verdicts import judge_input, judge_inputs, run_sets, select_ids
from nomad_lab.gate.stats import PairedTest, bootstrap_means, mcnemar_exact, paired_bootstrap
from nomad_lab.store import Store, Verdict
from nomad_lab.studies.gating.judge_confidence import LADDER_MODELS
from nomad_lab.studies.gating.run_param import RUN, study_run
from nomad_lab.studies.params import WORKSPACE, floor_param, judge_param, not_negative, suite_param
from nomad_lab.studies.result import Page, Result, formatted
from nomad_lab.studies.shape import Output, Param, Params, Study, argv


@dataclass(frozen=True)
class PerPassageComparison:
    """Floor only, one verdict and per passage on the same sets; rates as (value, low, high)."""

    model: str
    sets: int
    leak: dict[str, tuple[float, float, float]]
    recall: dict[str, tuple[float, float, float]]
    calls: dict[str, int]
    median_ms_per_set: dict[str, float]
    leak_test: PairedTest  # per passage against one verdict
    recall_test: PairedTest


def _interval(values: np.ndarray) -> tuple[float, float, float]:
    mean, lo, hi = bootstrap_means(values[None])
    return float(mean[0]), float(lo[0]), float(hi[0])


def compare_per_passage(
    store: Store,
    run_id: str,
    judge_spec: str,
    *,
    floor: float = 0.0,
    sample: int | None = None,
    progress: bool = True,
    backend: Backend | None = None,
) -> PerPassageComparison:
    """Judge each sampled set once whole and once passage by passage (cached), then compare paired."""
    ids = select_ids(store, run_id, sample=sample)
    judged = run_sets(store, run_id, floor=floor, ids=ids)
    questions = [
        (
            case,
            chosen,
            judge_input(case.query or "", chosen),
            [judge_input(case.query or "", [p]) for p in chosen],
        )
        for case, chosen in zip(judged.cases, judged.sets, strict=True)
        if chosen
    ]
    inputs = [item for _, _, whole, singles in questions for item in (whole, *singles)]
    found = judge_inputs(store, [judge_spec], inputs, backend=backend, progress=progress)[judge_spec]
    kept: dict[str, list[set[Any]]] = {"floor only": [], "one verdict": [], "per passage": []}
    ms: dict[str, list[float]] = {"one verdict": [], "per passage": []}
    refusal, relevant = [], []
    for case, chosen, whole, singles in questions:
        kept["floor only"].append({p.doc_id for p in chosen})
        kept["one verdict"].append({p.doc_id for p in chosen} if _keeps(found[whole.key]) else set())
        kept["per passage"].append(
            {p.doc_id for p, single in zip(chosen, singles, strict=True) if _keeps(found[single.key])}
        )
        ms["one verdict"].append(_ms(found[whole.key]))
        ms["per passage"].append(sum(_ms(found[single.key]) for single in singles))
        refusal.append(case.expect_refusal)
        relevant.append(set(case.relevant_doc_ids))
    is_refusal = np.array(refusal, dtype=bool)
    answerable = np.array([bool(r) for r in relevant], dtype=bool)
    leaked = {m: np.array([bool(k) for k in sets], dtype=bool)[is_refusal] for m, sets in kept.items()}
    recall = {
        m: np.array([len(k & r) / len(r) if r else np.nan for k, r in zip(sets, relevant, strict=True)])[
            answerable
        ]
        for m, sets in kept.items()
    }
    calls = {
        "floor only": 0,
        "one verdict": len(kept["one verdict"]),
        "per passage": sum(len(d) for d in kept["floor only"]),
    }
    return PerPassageComparison(
        model=judge_spec,
        sets=len(refusal),
        leak={m: _interval(v.astype(float)) for m, v in leaked.items()},
        recall={m: _interval(v) for m, v in recall.items()},
        calls=calls,
        median_ms_per_set={m: float(np.median(v)) if v else float("nan") for m, v in ms.items()},
        leak_test=mcnemar_exact(leaked["one verdict"], leaked["per passage"]),
        recall_test=paired_bootstrap(recall["one verdict"], recall["per passage"]),
    )


def _keeps(verdict: Verdict | None) -> bool:
    """A judge keeps its set unless it judged it off topic (failed open, or never asked: kept)."""
    return not (verdict is not None and verdict.ok and verdict.on_topic is False)


def _ms(verdict: Verdict | None) -> float:
    return (verdict.ms or 0.0) if verdict is not None else 0.0


def markdown(rows: Sequence[PerPassageComparison], sampled: bool) -> str:
    note = " (a stratified sample of sets: intervals cover the sample)" if sampled else ""
    out = [
        f"## Per-passage judge against one verdict per set{note}",
        "",
        "| judge | sets | gate | leak [95% CI] | recall@5 [95% CI] | judge calls | median ms per set |",
        "|---|---:|---|---|---|---:|---:|",
    ]
    for r in rows:
        for gate in ("floor only", "one verdict", "per passage"):
            lk, rc = r.leak[gate], r.recall[gate]
            out.append(
                f"| {r.model} | {r.sets} | {gate} | {lk[0]:.3f} [{lk[1]:.3f}, {lk[2]:.3f}] "
                f"| {rc[0]:.3f} [{rc[1]:.3f}, {rc[2]:.3f}] | {r.calls[gate]} "
                f"| {formatted(r.median_ms_per_set.get(gate), '.0f')} |"
            )
        out.append(
            f"\nPer passage minus one verdict: recall@5 {r.recall_test.statistic:+.3f} "
            f"[{r.recall_test.low:+.3f}, {r.recall_test.high:+.3f}] "
            f"(paired bootstrap p {r.recall_test.p_value:.3g}); "
            f"leak {r.leak_test.statistic:+.3f} (exact McNemar p {r.leak_test.p_value:.3g}). "
            "The seed measured -0.09 to -0.17 recall@5 per passage."
        )
        out.append(
            f"Sets: the {r.sets} the floor left non-empty (only those reach a judge); leak over its "
            f"{r.leak_test.n} off-topic sets, recall@5 over its {r.recall_test.n} answerable ones."
        )
    return "\n".join(out) + "\n"


PARAMS = (
    judge_param(None),
    suite_param("core,off_topic"),
    floor_param(0.0),
    Param("sample", int, 30, "stratified sample (0: all)", check=not_negative, metavar="N"),
    *WORKSPACE,
    RUN,
)


def compute(params: Params) -> dict[str, Any]:
    """Retrieve (or read the stored ``run``), then compare the two judges on its sets."""
    run_id = study_run(params, floor=params.floor)
    with Store(params.store) as store:
        row = compare_per_passage(
            store,
            run_id,
            params.judge_model,
            floor=params.floor,
            sample=params.sample or None,
            progress=not params.no_progress,
        )
    return {"row": row, "sampled": bool(params.sample)}


def result(raw: dict[str, Any]) -> Result:
    """``per_passage.json`` (the comparison's row) and ``per_passage.md``."""
    page = Page("per_passage.md", (markdown([raw["row"]], raw["sampled"]),))
    return Result("per-passage", value=raw, json={"per_passage.json": asdict(raw["row"])}, pages=(page,))


def _qwen(size: str) -> Output:
    return Output(
        f"Per-passage judge against one verdict per set (Qwen2.5-Coder {size.upper()})",
        argv(
            f"study per-passage --judge-model embedded:qwen2.5-coder-{size} --sample 40 "
            f"--store runs/judge.duckdb --out results/judge_per_passage/qwen2.5-coder-{size}"
        ),
        f"results/judge_per_passage/qwen2.5-coder-{size}",
        tables=("per_passage.md",),
        prefix=LADDER_MODELS,
    )


STUDY = Study(
    name="per-passage",
    title="Per-passage judge against one verdict per set (Gemma 3 270M)",
    run=compute,
    rows=lambda result: [json.loads(json.dumps(asdict(result["row"]), default=float))],
    out_dir="results/judge_per_passage",
    command=argv(
        "study per-passage --judge-model embedded:gemma3-270m --sample 40 --store runs/judge.duckdb"
    ),
    published=False,  # about 40 sets x (1 + passages) judge calls per model: its own command
    stage=65,
    also=(_qwen("0.5b"), _qwen("1.5b")),
)
