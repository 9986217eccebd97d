"""The retrieval report: a stored retrieval run (``eval.retrieval_service``) as the reference's report JSON,
the markdown beside it and what ``nomad-lab eval retrieval`` prints.

Why apart from the service: studies need the stored run only; this module only reads a
:class:`RetrievalRun` (its stored cases and metrics, and the run-time facts the store does not keep) and
never retrieves, judges or writes the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nomad_lab.eval.reports import EvalReport
from nomad_lab.eval.retrieval_metrics import AggregateMetrics, CaseResult, Interval
from nomad_lab.eval.retrieval_service import RetrievalRun
from nomad_lab.eval.separation import separation_rows
from nomad_lab.retrieval.index import BuildStats
from nomad_lab.store import CaseRecord

__all__ = [
    "HEADLINE_METRICS",
    "RATE_METRICS",
    "RetrievalEvalResult",
    "format_summary",
    "render_retrieval_markdown",
    "retrieval_report",
]


@dataclass
class RetrievalEvalResult:
    report: EvalReport
    run_id: str
    build: BuildStats
    cases: list[CaseResult]
    aggregate: AggregateMetrics
    intervals: dict[str, Interval | None]
    by_tag: dict[str, AggregateMetrics]
    leaked: list[dict[str, Any]]
    unresolved_chunks: int
    judge_line: str | None = None
    dump_path: Path | None = None
    report_paths: tuple[Path, Path] | None = None
    ablation: dict[str, Any] | None = None


def _leaked(record: CaseRecord, case: CaseResult) -> dict[str, Any]:
    top = case.top
    return {
        "id": record.golden_id,
        "query": record.query,
        "tags": list(record.tags),
        "retrievedCount": len(case.chunks),
        "topDocId": None if top is None else top.doc_id,
        "topScore": None if top is None else top.score,
        "topSemanticScore": None if top is None else top.semantic_score,
    }


def _interval_json(intervals: dict[str, Interval | None]) -> dict[str, Any]:
    return {name: None if iv is None else iv.to_json() for name, iv in intervals.items()}


def retrieval_report(run: RetrievalRun) -> RetrievalEvalResult:
    """The report of a stored run: the reference's ``{meta, metrics, byTag, cases}`` plus nomad-lab's keys."""
    leaked = [
        _leaked(record, case)
        for record, case in zip(run.records, run.cases, strict=True)
        if record.expect_refusal and not case.empty
    ]
    judge_json = None
    if run.judge_stats is not None:
        s = run.judge_stats
        judge_json = {
            "model": s.model,
            "calls": s.calls,
            "failures": s.failures,
            "rejected": s.rejected,
            "meanMs": s.mean_ms,
            "maxMs": s.max_ms,
            "cacheHits": run.judge_cache_hits,
            "reasons": s.reasons,
        }
    overall, by_tag, build = run.overall, run.by_tag, run.build
    report = EvalReport(
        meta={**run.meta, "runId": run.run_id},
        metrics=overall.metrics(),
        by_tag={tag: agg.metrics() for tag, agg in by_tag.items()},
        cases=[r.result for r in run.records if r.result is not None],
        extra={
            "counts": {
                "cases": overall.cases,
                "answerable": overall.answerable,
                "refusals": overall.refusals,
            },
            "intervals": _interval_json(run.intervals),
            "byTagIntervals": {tag: _interval_json(iv) for tag, iv in run.tag_intervals.items()},
            "byTagCounts": {
                tag: {"cases": a.cases, "answerable": a.answerable, "refusals": a.refusals}
                for tag, a in by_tag.items()
            },
            "byKind": {kind: agg.metrics() for kind, agg in run.by_kind.items()},
            "byKindIntervals": {kind: _interval_json(iv) for kind, iv in run.kind_intervals.items()},
            "byKindCounts": {kind: agg.refusals for kind, agg in run.by_kind.items()},
            "distributions": overall.distributions(),
            "separation": separation_rows(overall.distributions()),
            **({"ablation": run.ablation} if run.ablation is not None else {}),
            "leaked": leaked,
            "unresolvedChunks": run.unresolved_chunks,
            "judge": judge_json,
            "index": {
                "fingerprint": build.fingerprint,
                "docs": build.docs,
                "chunks": build.chunks,
                "embedded": build.embedded,
                "reused": build.reused,
                "seconds": build.seconds,
                "cachedIndex": build.cached_index,
            },
        },
    )
    judge_line = None
    if run.judge_stats is not None:
        judge_line = run.judge_stats.line() + f" · {run.judge_cache_hits} from cache"
    return RetrievalEvalResult(
        report=report,
        run_id=run.run_id,
        build=build,
        cases=run.cases,
        aggregate=overall,
        intervals=run.intervals,
        by_tag=by_tag,
        leaked=leaked,
        unresolved_chunks=run.unresolved_chunks,
        judge_line=judge_line,
        ablation=run.ablation,
    )


# ------------------------------------------------------------------------------------------ output


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def _with_interval(name: str, value: float | None, interval: dict[str, Any] | None, percent: bool) -> str:
    fmt = _pct if percent else _num
    if value is None:
        return "—"
    if not interval:
        return fmt(value)
    return f"{fmt(value)} [{fmt(interval['low'])}, {fmt(interval['high'])}]"


RATE_METRICS = ("emptyRateOnAnswerable", "nonEmptyRateOnRefusal")
HEADLINE_METRICS = (
    "recall@1",
    "recall@3",
    "recall@5",
    "recall@10",
    "hitRate@1",
    "hitRate@5",
    "precision@3",
    "precision@5",
    "ndcg@3",
    "ndcg@5",
    "mrr",
    *RATE_METRICS,
)


def format_summary(result: RetrievalEvalResult) -> str:
    """What ``eval retrieval`` prints: metrics with 95% intervals, per-tag leaks, the leaked cases."""
    report = result.report
    params = report.meta["params"]
    counts = report.extra["counts"]
    intervals = report.extra["intervals"]
    build = result.build
    built = (
        "cached index" if build.cached_index else f"built: {build.embedded} embedded, {build.reused} reused"
    )
    lines = [
        f"Corpus {report.fingerprint}: {build.docs} docs, {build.chunks} chunks "
        f"({built}, {build.seconds:.1f}s)",
        f"Suite {params['suite']}: {counts['cases']} cases ({counts['answerable']} answerable, "
        f"{counts['refusals']} expected refusals) · floor {params['minFinalScore']} · topK {params['topK']}"
        + ("" if params["includeDistractors"] else " · distractors excluded"),
        "",
        "metric                    value  [95% interval]",
    ]
    for name in HEADLINE_METRICS:
        value = report.metrics.get(name)
        lines.append(f"  {name:<24}{_with_interval(name, value, intervals.get(name), name in RATE_METRICS)}")
    lines.append("  (intervals: Wilson for hitRate and the two rates, seeded percentile bootstrap for means)")
    kinds = report.extra.get("byKind", {})
    if kinds:
        lines += ["", "Leak rate per refusal kind (refusal cases that retrieved something):"]
        for kind, metrics in kinds.items():
            iv = report.extra["byKindIntervals"][kind].get("nonEmptyRateOnRefusal")
            n = report.extra["byKindCounts"][kind]
            rate = _with_interval("", metrics["nonEmptyRateOnRefusal"], iv, True)
            lines.append(f"  {kind:<24}leaked={rate} (n={n})")
    leak_tags = [(tag, m) for tag, m in report.by_tag.items() if m.get("nonEmptyRateOnRefusal") is not None]
    if leak_tags:
        lines += ["", "Per-tag leak rate (refusal cases that retrieved something):"]
        for tag, metrics in leak_tags:
            iv = report.extra["byTagIntervals"][tag].get("nonEmptyRateOnRefusal")
            n = report.extra["byTagCounts"][tag]["refusals"]
            lines.append(
                f"  {tag:<24}leaked={_with_interval('', metrics['nonEmptyRateOnRefusal'], iv, True)} (n={n})"
            )
    if result.leaked:
        lines += ["", f"Leaked cases ({len(result.leaked)}): refusal goldens that still got context:"]
        for leak in sorted(result.leaked, key=lambda x: -(x["topScore"] or 0)):
            lines.append(
                f"  {leak['id']:<28} top {leak['topScore']:.3f} (cos {leak['topSemanticScore']:.3f}) "
                f"{leak['topDocId']} · {leak['query'][:70]}"
            )
    if result.judge_line:
        lines += ["", result.judge_line]
    if result.unresolved_chunks:
        lines += ["", f"ERROR: {result.unresolved_chunks} retrieved chunk(s) did not resolve to a corpus doc"]
    lines += ["", f"Run {result.run_id} stored"]
    if result.dump_path:
        lines.append(f"Dump: {result.dump_path}")
    if result.report_paths:
        lines.append(f"Report: {result.report_paths[0]} and {result.report_paths[1].name}")
    return "\n".join(lines)


def render_retrieval_markdown(report: EvalReport) -> str:
    """The markdown report: meta, metrics with intervals, per-tag table, distributions, leaked cases."""
    meta, params, extra = report.meta, report.meta["params"], report.extra
    intervals = extra.get("intervals", {})
    lines = [
        f"# Retrieval eval · {params['suite']} · floor {params['minFinalScore']}",
        "",
        f"- created: {meta['createdAt']} · run `{meta.get('runId')}`",
        f"- corpus fingerprint: `{meta['corpusFingerprint']}`"
        + ("" if params.get("includeDistractors", True) else " (distractors excluded)"),
        f"- git: `{meta.get('gitSha')}` ({meta.get('gitBranch')}{', dirty' if meta.get('gitDirty') else ''})",
        f"- embedding: {params['embeddingModel']} · {params['embeddingMethod']}",
        f"- topK {params['topK']} · candidate net cosine >= {params['scoreThreshold']} · judge "
        f"{params.get('judgeModel') or 'off'}",
        f"- cases {extra['counts']['cases']} · answerable {extra['counts']['answerable']} · "
        f"refusals {extra['counts']['refusals']}",
        "",
        "## Metrics (95% intervals: Wilson for hitRate and rates, bootstrap for means)",
        "",
        "| metric | value | 95% interval |",
        "|---|---:|---|",
    ]
    for name, value in report.metrics.items():
        iv = intervals.get(name)
        span = "—" if not iv else f"[{iv['low']:.4f}, {iv['high']:.4f}]"
        lines.append(f"| {name} | {_num(value)} | {span} |")
    lines += [
        "",
        "## By tag",
        "",
        "| tag | cases | recall@5 | precision@5 | ndcg@5 | leak rate |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for tag, metrics in report.by_tag.items():
        counts = extra["byTagCounts"][tag]
        lines.append(
            f"| {tag} | {counts['cases']} | {_num(metrics.get('recall@5'))} | "
            f"{_num(metrics.get('precision@5'))} | {_num(metrics.get('ndcg@5'))} | "
            f"{_pct(metrics.get('nonEmptyRateOnRefusal'))} |"
        )
    lines += [
        "",
        "## Score distributions (returned chunks)",
        "",
        "| side | count | min | p10 | median | p90 | max | mean |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for side, dist in extra["distributions"].items():
        lines.append(
            f"| {side} | {dist['count']} | "
            + " | ".join(_num(dist[k]) for k in ("min", "p10", "median", "p90", "max", "mean"))
            + " |"
        )
    leaked = extra.get("leaked") or []
    lines += ["", f"## Leaked refusal cases ({len(leaked)})", ""]
    if leaked:
        lines += ["| id | top score | top cosine | top doc | query |", "|---|---:|---:|---|---|"]
        for leak in sorted(leaked, key=lambda x: -(x["topScore"] or 0)):
            query = leak["query"].replace("|", "\\|")
            lines.append(
                f"| {leak['id']} | {_num(leak['topScore'])} | {_num(leak['topSemanticScore'])} | "
                f"{leak['topDocId']} | {query} |"
            )
    if extra.get("judge"):
        j = extra["judge"]
        lines += [
            "",
            "## Relevance judge",
            "",
            f"{j['model']} · {j['calls']} calls · rejected {j['rejected']} chunk(s) · {j['failures']} failed "
            f"open · mean {j['meanMs']:.0f}ms max {j['maxMs']:.0f}ms · {j['cacheHits']} from cache",
        ]
    index = extra.get("index") or {}
    if index:
        lines += [
            "",
            "## Index",
            "",
            f"{index['docs']} docs · {index['chunks']} chunks · "
            f"{'cached' if index['cachedIndex'] else 'built'} in {index['seconds']:.1f}s "
            f"({index['embedded']} embedded, {index['reused']} reused)",
        ]
    return "\n".join(lines) + "\n"
