"""The retrieval tier of the eval harness (the reference's ``eval:retrieval``).

Goldens in; metrics, candidate pools and a report out.

One run: load the corpus and the suites, build (or reuse) the index, retrieve for every golden with the
given floor, optionally ask a relevance judge about every non-empty result (verdicts cached in the store
by model and judge-input hash, so a rerun makes no model call), score every case (SPEC §8.2), and store
the run with each question's FULL pre-floor candidate pool, so later gate studies never retrieve again.

Retrieval uses the raw golden query (no conversation rewrite), as the reference's retrieval tier does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nomad_lab.core.reference import RAG_DEFAULT_SCORE_THRESHOLD, RAG_DEFAULT_TOP_K, RAG_MIN_FINAL_SCORE
from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR, DEFAULT_STORE_PATH
from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.goldens import Golden, load_suites
from nomad_lab.eval.ablation import Ablation
from nomad_lab.eval.provenance import git_state, iso_now, package_versions, platform_info
from nomad_lab.eval.reports import EvalReport
from nomad_lab.eval.retrieval_metrics import (
    DEFAULT_K_VALUES,
    AggregateMetrics,
    CaseResult,
    Interval,
    RetrievedChunk,
    aggregate,
    aggregate_by_tag,
    metric_intervals,
    score_case,
)
from nomad_lab.eval.separation import separation_rows
from nomad_lab.gate.rerank import Candidate
from nomad_lab.services.verdict_cache import CachedJudge
from nomad_lab.store import CaseRecord, PoolEntry, RunRecord, Store

if TYPE_CHECKING:
    from nomad_lab.backends import Backend
    from nomad_lab.retrieval.embedding import Embedder
    from nomad_lab.retrieval.index import BuildStats

__all__ = [
    "RetrievalEvalConfig",
    "RetrievalEvalResult",
    "format_summary",
    "render_retrieval_markdown",
    "run_retrieval_eval",
]


@dataclass(frozen=True)
class RetrievalEvalConfig:
    corpus_dir: Path = DEFAULT_CORPUS_DIR
    goldens_dir: Path = DEFAULT_GOLDENS_DIR
    suite: str = "core"
    floor: float = RAG_MIN_FINAL_SCORE
    top_k: int = RAG_DEFAULT_TOP_K
    score_threshold: float = RAG_DEFAULT_SCORE_THRESHOLD
    include_distractors: bool = True
    judge_model: str | None = None
    judge_retry_failed: bool = False
    store_path: Path = DEFAULT_STORE_PATH
    dump_path: Path | None = None
    report_dir: Path | None = None
    progress: bool = True
    k_values: tuple[int, ...] = DEFAULT_K_VALUES
    embedder: str | None = None  # an embedder spec (see retrieval.embedder_spec); None: MiniLM
    ablate: bool = False  # also score dense only / +rerank / +diversity (eval.ablation)


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


def _pool(candidates: Sequence[Candidate]) -> list[PoolEntry]:
    return [
        PoolEntry(rank, c.doc_id, c.chunk_id, c.final, c.semantic_score)
        for rank, c in enumerate(candidates, start=1)
    ]


def _leaked(golden: Golden, case: CaseResult) -> dict[str, Any]:
    top = case.top
    return {
        "id": golden.id,
        "query": golden.query,
        "tags": list(golden.tags),
        "retrievedCount": len(case.chunks),
        "topDocId": None if top is None else top.doc_id,
        "topScore": None if top is None else top.score,
        "topSemanticScore": None if top is None else top.semantic_score,
    }


def _interval_json(intervals: dict[str, Interval | None]) -> dict[str, Any]:
    return {name: None if iv is None else iv.to_json() for name, iv in intervals.items()}


def run_retrieval_eval(
    config: RetrievalEvalConfig, embedder: Embedder | None = None, judge_backend: Backend | None = None
) -> RetrievalEvalResult:
    """Run the retrieval tier end to end; writes the store, and the dump and reports when configured.

    ``judge_backend`` replaces the backend ``config.judge_model`` names (the spec still keys the cache).
    Every input is checked before anything slow or stateful: corpus, goldens and the judge spec (a bad
    spec or a missing model package) before the store is opened, the store before the embedder loads.
    Each verdict is committed as it is computed, so a killed run loses at most the call in flight.
    """
    from tqdm.auto import tqdm

    from nomad_lab.backends import open_backend
    from nomad_lab.retrieval.embedding import load_embedder
    from nomad_lab.retrieval.index import build_index

    corpus = load_corpus(config.corpus_dir, include_distractors=config.include_distractors)
    goldens = load_suites(config.goldens_dir, config.suite, corpus.all_doc_ids)
    if config.judge_model and judge_backend is None:
        judge_backend = open_backend(config.judge_model)  # cheap: validates, loads no model
    created_at = iso_now()
    with Store(config.store_path) as store:
        embedder = embedder or load_embedder(config.embedder)
        index, build = build_index(corpus, store, embedder, progress=config.progress)
        judge = None
        if config.judge_model:
            judge = CachedJudge(config.judge_model, store, config.judge_retry_failed, judge_backend)
        vectors = index.embed_queries([g.query for g in goldens], progress=config.progress)
        cases: list[CaseResult] = []
        case_records: list[CaseRecord] = []
        pools: dict[str, list[PoolEntry]] = {}
        leaked: list[dict[str, Any]] = []
        unresolved = 0
        ablation = Ablation(config.k_values, config.top_k) if config.ablate else None
        for position, (golden, vector) in enumerate(
            zip(
                tqdm(goldens, desc=f"retrieval {config.suite}", unit="q", disable=not config.progress),
                vectors,
                strict=True,
            )
        ):
            ranked = index.search(golden.query, config.top_k, config.score_threshold, config.floor, vector)
            chunks = ranked.chunks
            if ablation is not None:
                ablation.add(golden, ranked)
            judge_record = None
            if judge is not None and chunks:  # the judge runs only when the floor left something
                chunks, judge_record = judge(golden.query, chunks)
            unresolved += sum(1 for c in chunks if c.doc_id is None)
            case = score_case(
                golden.id,
                [RetrievedChunk(c.doc_id, c.final, c.semantic_score) for c in chunks],
                golden.relevant_doc_ids,
                golden.expect_refusal,
                golden.tags,
                config.k_values,
            )
            cases.append(case)
            pools[golden.id] = _pool(ranked.stages.candidates)
            case_json = case.to_json()
            case_json["belowFloor"] = ranked.floor.below_floor
            case_json["candidates"] = ranked.floor.candidates
            case_records.append(
                CaseRecord(
                    golden.id,
                    position,
                    golden.tags,
                    golden.expect_refusal,
                    golden.relevant_doc_ids,
                    golden.suite,
                    golden.query,
                    case_json,
                    judge_record,
                )
            )
            if golden.expect_refusal and not case.empty:
                leaked.append(_leaked(golden, case))

        overall = aggregate(cases, config.k_values)
        intervals = metric_intervals(cases, config.k_values)
        by_tag = aggregate_by_tag(cases, config.k_values)
        tag_intervals = {
            tag: metric_intervals([c for c in cases if tag in c.tags], config.k_values) for tag in by_tag
        }
        params = {
            "topK": config.top_k,
            "scoreThreshold": config.score_threshold,
            "minFinalScore": config.floor,
            "kValues": list(config.k_values),
            "suite": config.suite,
            "includeDistractors": config.include_distractors,
            "excludedDocs": list(corpus.excluded),
            "judgeModel": config.judge_model,
            "embeddingModel": embedder.name,
            "embeddingMethod": embedder.method,
            "embedder": embedder.identity(),
            "ingestParts": index.params.parts(),
        }
        git = git_state()
        versions = {**package_versions(), "embeddingModel": embedder.model_version}
        meta = {
            "kind": "retrieval",
            "createdAt": created_at,
            "corpusFingerprint": index.fingerprint,
            **git,
            "nomadVersion": versions.get("nomad-lab"),
            "platform": platform_info(),
            "params": params,
            "versions": versions,
        }
        judge_json = None
        if judge is not None:
            s = judge.stats
            judge_json = {
                "model": s.model,
                "calls": s.calls,
                "failures": s.failures,
                "rejected": s.rejected,
                "meanMs": s.mean_ms,
                "maxMs": s.max_ms,
                "cacheHits": judge.cache_hits,
                "reasons": s.reasons,
            }
        report = EvalReport(
            meta=meta,
            metrics=overall.metrics(),
            by_tag={tag: agg.metrics() for tag, agg in by_tag.items()},
            cases=[r.result for r in case_records if r.result is not None],
            extra={
                "counts": {
                    "cases": overall.cases,
                    "answerable": overall.answerable,
                    "refusals": overall.refusals,
                },
                "intervals": _interval_json(intervals),
                "byTagIntervals": {tag: _interval_json(iv) for tag, iv in tag_intervals.items()},
                "byTagCounts": {
                    tag: {"cases": a.cases, "answerable": a.answerable, "refusals": a.refusals}
                    for tag, a in by_tag.items()
                },
                "distributions": overall.distributions(),
                "separation": separation_rows(overall.distributions()),
                **({"ablation": ablation.table()} if ablation is not None else {}),
                "leaked": leaked,
                "unresolvedChunks": unresolved,
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
        metric_rows = _metric_rows(report.metrics, intervals, "all")
        for tag, agg in by_tag.items():
            metric_rows += _metric_rows(agg.metrics(), tag_intervals[tag], f"tag:{tag}")
        run = RunRecord.with_git(
            git,
            kind="retrieval",
            fingerprint=index.fingerprint,
            params=params,
            suite=config.suite,
            versions=versions,
        )
        run_id = store.put_run(run, case_records, pools, metric_rows)
        report.meta["runId"] = run_id
        dump_path = store.write_dump(run_id, config.dump_path) if config.dump_path else None

    result = RetrievalEvalResult(
        report=report,
        run_id=run_id,
        build=build,
        cases=cases,
        aggregate=overall,
        intervals=intervals,
        by_tag=by_tag,
        leaked=leaked,
        unresolved_chunks=unresolved,
        judge_line=None if judge is None else judge.stats.line() + f" · {judge.cache_hits} from cache",
        dump_path=dump_path,
        ablation=report.extra.get("ablation"),
    )
    if config.report_dir is not None:
        from nomad_lab.eval.reports import write_report

        result.report_paths = write_report(report, config.report_dir, render_retrieval_markdown(report))
    return result


def _metric_rows(
    metrics: dict[str, float | None], intervals: dict[str, Interval | None], scope: str
) -> list[tuple[str, str, float | None, float | None, float | None, str | None]]:
    rows = []
    for name, value in metrics.items():
        iv = intervals.get(name)
        rows.append(
            (
                scope,
                name,
                value,
                None if iv is None else iv.low,
                None if iv is None else iv.high,
                None if iv is None else iv.method,
            )
        )
    return rows


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
