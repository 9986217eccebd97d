"""The relevance judge as a gate over a stored retrieval run: verdicts once, then statistics.

For every question of a stored run, the set the judge would read is rebuilt from the stored pool
exactly as the pipeline builds it (floor, then source diversity, then top k; chunk texts from the
store), and its verdict is read from the store's verdict cache or computed once and stored, by the one
place a judge runs over a run (``eval.gating.inputs.verdicts``). The verdicts then act as a gate on the
same pools, so the judge can be compared with floor-only on identical questions: leak and recall@5 with
intervals, an exact McNemar test on leaks, a paired bootstrap on recall, latency and failures per model.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.backends import Backend
from nomad_lab.core.workspace import DEFAULT_STORE_PATH
from nomad_lab.data.refusal_kinds import OFF_TOPIC as OFF_TOPIC_KIND
from nomad_lab.eval.gating.inputs.verdicts import Filler, run_verdicts, select_ids
from nomad_lab.eval.gating.run_data import stored_pools
from nomad_lab.gate import masks
from nomad_lab.gate.stats import PairedTest, bootstrap_means, mcnemar_exact, paired_bootstrap
from nomad_lab.store import Store
from nomad_lab.studies.gating import judge_confidence
from nomad_lab.studies.gating.judged_run import JudgedRun
from nomad_lab.studies.gating.run_param import RUN, study_run
from nomad_lab.studies.params import (
    CLUSTER,
    ENDPOINT,
    WORKSPACE,
    alpha_param,
    floor_param,
    judge_param,
    not_negative,
    positive,
    suite_param,
)
from nomad_lab.studies.result import ABSENT, Figure, Page, Result, absent, formatted
from nomad_lab.studies.shape import Output, Param, Params, Study, argv


def judge_runs(
    store: Store,
    run_id: str,
    judge_specs: Sequence[str],
    *,
    floor: float,
    limit: int | None = None,
    progress: bool = True,
    backend: Backend | None = None,
    sample: int | None = None,
    reask_confidence: bool = False,
    only: Collection[str] | None = None,
    filler: Filler | None = None,
) -> list[JudgedRun]:
    """Each judge's verdicts on the questions of ``run_id`` (those whose golden id is in ``only``; the
    first ``limit``, or a stratified ``sample``), through the one place a judge runs over a run
    (:func:`~nomad_lab.eval.gating.inputs.verdicts.run_verdicts`: what the cache lacks is computed, by
    ``filler`` when given, and stored), as the pools the comparisons read."""
    ids = select_ids(store, run_id, only=only, limit=limit, sample=sample)
    found = run_verdicts(
        store,
        run_id,
        judge_specs,
        floor=floor,
        ids=ids,
        filler=filler,
        backend=backend,
        reask_confidence=reask_confidence,
        progress=progress,
    )
    pools = stored_pools(store, run_id)
    pools = pools.subset(np.isin(np.array(pools.ids, dtype=object), ids))
    return [
        JudgedRun(
            pools,
            v.verdicts,
            v.ms,
            floor,
            spec,
            v.stats.line(),
            v.stats.failures,
            v.stats.calls,
            v.p_true,
            v.gold,
            bool(sample),
        )
        for spec, v in found.items()
    ]


def judge_run(store: Store, run_id: str, judge_spec: str, **options: Any) -> JudgedRun:
    """:func:`judge_runs` for one judge (``options`` are its keywords)."""
    return judge_runs(store, run_id, [judge_spec], **options)[0]


@dataclass(frozen=True)
class GateComparison:
    """Floor-only against floor-then-judge at one floor, on the same questions."""

    model: str
    floor: float
    leak_floor: tuple[float, float, float]  # rate, low, high
    leak_judge: tuple[float, float, float]
    recall_floor: tuple[float, float, float]
    recall_judge: tuple[float, float, float]
    leak_test: PairedTest
    recall_test: PairedTest
    calls: int
    failures: int
    median_ms: float
    p95_ms: float


def compare_with_floor(judged: JudgedRun, k: int = masks.DEFAULT_K) -> GateComparison:
    """Score floor-only and floor+judge on the judged run's pools and test the difference."""
    pools = judged.pools
    floor_only = masks.score_floor(pools, [judged.floor])
    with_judge = masks.both(floor_only, masks.judge(pools, judged.verdicts))
    recall_a, nonempty_a = masks.evaluate(pools, floor_only, k)
    recall_b, nonempty_b = masks.evaluate(pools, with_judge, k)
    # the leak counts off-topic refusals only: the judge is asked whether the context is on topic
    refusal, answerable = pools.of_kind(OFF_TOPIC_KIND), pools.n_relevant > 0

    def interval(values: np.ndarray) -> tuple[float, float, float]:
        mean, lo, hi = bootstrap_means(values[None])
        return float(mean[0]), float(lo[0]), float(hi[0])

    called = judged.ms[~np.isnan(judged.ms)]
    return GateComparison(
        model=judged.model,
        floor=judged.floor,
        leak_floor=interval(nonempty_a[0, refusal].astype(float)),
        leak_judge=interval(nonempty_b[0, refusal].astype(float)),
        recall_floor=interval(recall_a[0, answerable]),
        recall_judge=interval(recall_b[0, answerable]),
        leak_test=mcnemar_exact(nonempty_a[0, refusal], nonempty_b[0, refusal]),
        recall_test=paired_bootstrap(recall_a[0, answerable], recall_b[0, answerable]),
        calls=judged.calls,
        failures=judged.failures,
        median_ms=float(np.median(called)) if called.size else float("nan"),
        p95_ms=float(np.percentile(called, 95)) if called.size else float("nan"),
    )


def markdown(rows: Sequence[GateComparison]) -> str:
    """One row per judge model: leak and recall with intervals, tests against floor-only, cost."""
    out = [
        "| judge | floor | leak floor-only | leak +judge | McNemar p | recall@5 floor-only | recall@5 +judge "
        "| Δ recall [95% CI] | calls | failed open | median ms | p95 ms |",
        "|---|---:|---|---|---:|---|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r.model} | {r.floor:.2f} | {_ci(r.leak_floor)} | {_ci(r.leak_judge)} "
            f"| {r.leak_test.p_value:.3g} "
            f"| {_ci(r.recall_floor)} | {_ci(r.recall_judge)} "
            f"| {r.recall_test.statistic:+.3f} [{r.recall_test.low:+.3f}, {r.recall_test.high:+.3f}] "
            f"| {r.calls} | {r.failures} | {formatted(r.median_ms, '.0f')} | {formatted(r.p95_ms, '.0f')} |"
        )
    return "\n".join(out)


def _ci(value: tuple[float, float, float]) -> str:
    return ABSENT if absent(value) else formatted(list(value), ".3f")


def run_judge_study(
    judge_specs: Sequence[str],
    run_id: str,
    *,
    floor: float = 0.0,
    limit: int | None = None,
    store_path: str | Path | None = None,
    progress: bool = True,
    fill_missing: Filler | None = None,
    sample: int | None = None,
    reask_confidence: bool = False,
    judged_runs: list[JudgedRun] | None = None,
) -> list[GateComparison]:
    """Judge the stored retrieval run ``run_id`` with each model (a study resolves its ``--run`` first:
    :func:`nomad_lab.studies.gating.run_param.study_run`).

    ``fill_missing``, when given, computes every model's missing verdicts (on a Dask cluster:
    ``nomad_lab.runners.cluster.verdict_filler``) instead of this process. ``sample`` judges a
    stratified sample of that many questions; each model's ``JudgedRun`` (verdicts, P(true), gold
    labels) is appended to ``judged_runs`` when given.
    """
    path = Path(store_path) if store_path else DEFAULT_STORE_PATH
    with Store(path) as store:
        runs = judge_runs(
            store,
            run_id,
            judge_specs,
            floor=floor,
            limit=limit,
            progress=progress,
            sample=sample,
            reask_confidence=reask_confidence,
            filler=fill_missing,
        )
    rows = []
    for judged in runs:
        print(judged.stats_line)
        if judged_runs is not None:
            judged_runs.append(judged)
        rows.append(compare_with_floor(judged))
    return rows


def plot_comparison(rows: Sequence[GateComparison]) -> Any:
    """Bars with 95% intervals: floor-only, then floor+judge per model, for leak rate and recall@5."""
    import matplotlib.pyplot as plt  # heavy

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    labels = ["floor only"] + [r.model for r in rows]
    for ax, (title, pick) in zip(
        axes, [("off-topic leak rate", "leak"), ("recall@5", "recall")], strict=True
    ):
        values = [getattr(rows[0], f"{pick}_floor")] + [getattr(r, f"{pick}_judge") for r in rows]
        ax.bar(
            range(len(values)),
            [v[0] for v in values],
            yerr=[[v[0] - v[1] for v in values], [v[2] - v[0] for v in values]],
            capsize=4,
        )
        ax.set_xticks(range(len(values)), labels, rotation=20, fontsize=7)
        ax.set_title(f"{title} (floor {rows[0].floor:g})")
    fig.tight_layout()
    return fig


PARAMS = (
    judge_param(
        ("embedded:gemma3-270m",),
        "judge backend spec, e.g. embedded:gemma3-270m (repeatable: one row per model; SmolLM2-135M and "
        "the Qwen models are on the opt-in `study ladder`)",
    ),
    suite_param("off_topic", "suite(s) to judge"),
    floor_param(0.0),
    Param("limit", int, None, "judge only the first N questions", check=positive, metavar="N"),
    Param(
        "sample",
        int,
        None,
        "judge a seeded stratified sample of N questions (half refusals); intervals cover the sample",
        check=not_negative,
        metavar="N",
    ),
    alpha_param(0.05, "leak target of the calibrated (floor, tau)"),
    Param(
        "reask_confidence",
        bool,
        False,
        "ask again for cached verdicts stored before P(true) was read (otherwise they keep null)",
        flag=True,
    ),
    *WORKSPACE,
    RUN,
    ENDPOINT,
    *CLUSTER,
)


@dataclass(frozen=True)
class JudgesResult:
    """The floor-vs-judge comparison per model, and each model's confidence study (tau, surface)."""

    rows: list[GateComparison]
    confidence: list[dict[str, Any]]


def compute(params: Params, fill_missing: Filler | None = None) -> JudgesResult:
    """The study from its declared parameters; ``fill_missing`` (the Dask verdict filler, a hook the
    runner builds from ``workers``/``scheduler``) computes the missing verdicts on the cluster."""
    judged_runs: list[JudgedRun] = []
    rows = run_judge_study(
        params.judge_model,
        study_run(params, floor=params.floor),
        floor=params.floor,
        limit=params.limit,
        fill_missing=fill_missing,
        store_path=params.store,
        progress=not params.no_progress,
        sample=params.sample,
        reask_confidence=params.reask_confidence,
        judged_runs=judged_runs,
    )
    confidence = [judge_confidence.run_confidence_study(judged, alpha=params.alpha) for judged in judged_runs]
    return JudgesResult(rows, confidence)


def result(raw: JudgesResult) -> Result:
    """``judges.json``, ``judges.md`` and ``judges.png`` (no plot without a row), and each model's
    confidence study (``confidence_<model>.*``); the command prints the comparison table."""
    documents: dict[str, Any] = {"judges.json": [asdict(r) for r in raw.rows]}
    pages = [Page("judges.md", (markdown(raw.rows),))]
    figures = [Figure("judges.png", partial(plot_comparison, raw.rows))] if raw.rows else []
    for study in raw.confidence:
        document, page, figure = judge_confidence.confidence_parts(study)
        documents |= document
        pages.append(page)
        figures.append(figure)
    return Result("judges", value=raw, json=documents, pages=tuple(pages), figures=tuple(figures))


STUDY = Study(
    name="judges",
    title="Relevance judge models against the floor alone (Gemma 3 270M)",
    run=compute,
    rows=lambda result: [asdict(r) for r in result.rows],
    command=argv("sweep judge_models -p out_dir results/judges --rerun --cell-timeout 3600"),
    figures=("judges.png",),
    stage=40,
    notebook="judge_models",
    hooks=("fill_missing",),
    also=(
        Output(
            "The judge's confidence: agreement, tau curve, (floor, tau) surface (Gemma 3 270M, sample of 50)",
            argv(
                "study judges --judge-model embedded:gemma3-270m --suite core,off_topic --sample 50 "
                "--store runs/judge.duckdb --out results/judge_confidence"
            ),
            "results/judge_confidence",
            ("confidence_embedded_gemma3_270m.png", "judges.png"),
            ("confidence_embedded_gemma3_270m.md", "judges.md"),
        ),
    ),
)
