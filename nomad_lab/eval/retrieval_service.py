"""Retrieval as a service: one suite retrieved into a stored run, whose id every gate study starts from.

Why a service: the floor, judge, growth, injection, embedder and per-passage studies all need the same
thing (every question's FULL pre-floor candidate pool, stored once per corpus), and only ``eval
retrieval`` needs a report of it. :func:`retrieve` loads the corpus and the suites, builds (or reuses)
the index, retrieves every golden with the given floor, optionally asks a relevance judge about every
non-empty result (verdicts cached in the store by model and judge-input hash, so a rerun makes no model
call), scores every case (SPEC §8.2) and stores the run with its cases, pools and metric rows. What the
store does not keep (how the index was built, the judge's timings, the ablation arms) travels beside the
run id in :class:`RetrievalRun`, for the report (``eval.retrieval_eval``) to print.

Retrieval uses the raw golden query (no conversation rewrite), as the reference's retrieval tier does.
``RetrievalRequest(standalone=True)`` is for gating pools only: a follow-up golden that carries a
hand-written ``standalone`` rewrite is retrieved (and stored, and judged) by that rewrite instead, so a gate
is scored on the question the user meant rather than on "And at 2,400 m?". Off by default, so every other
caller keeps the reference behaviour; a run made with it records ``"standalone": true`` in its params.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from nomad_lab.backends import Backend, open_backend
from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.reference import RAG_DEFAULT_SCORE_THRESHOLD, RAG_DEFAULT_TOP_K, RAG_MIN_FINAL_SCORE
from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR, DEFAULT_STORE_PATH
from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.golden_suites import load_suites
from nomad_lab.data.refusal_kinds import REFUSAL_KINDS
from nomad_lab.eval.ablation import Ablation
from nomad_lab.eval.provenance import git_state, iso_now, package_versions, platform_info
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
from nomad_lab.gate.reference_ranking import Candidate
from nomad_lab.retrieval.embedding import Embedder, load_embedder
from nomad_lab.retrieval.index import BuildStats, build_index, stored_query_vectors
from nomad_lab.services.judge_service import JudgeStats
from nomad_lab.services.verdict_cache import CachedJudge
from nomad_lab.store import CaseRecord, PoolEntry, RunRecord, Store

__all__ = ["RetrievalRequest", "RetrievalRun", "retrieve"]

LABEL_EDITS_KIND = "label-edits"
"""The run kind of a labelling sitting's edited wordings (:attr:`RetrievalRequest.edits_of`)."""
MetricRow = tuple[str, str, float | None, float | None, float | None, str | None]


@dataclass(frozen=True)
class RetrievalRequest:
    """What to retrieve and how: the workspace, the suite(s), the retrieval parameters and the judge."""

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
    progress: bool = True
    k_values: tuple[int, ...] = DEFAULT_K_VALUES
    embedder: str | None = None  # an embedder spec (see retrieval.embedder_spec); None: MiniLM
    index: str | None = None  # an index spec (see retrieval.index_spec); None: exact
    ablate: bool = False  # also score dense only / +rerank / +diversity (eval.ablation)
    standalone: bool = False  # retrieve a follow-up by its golden's standalone rewrite (gating pools only)
    drafts: bool = False  # drafted questions too (a labelling sitting, label-free thresholds); never scored
    edits_of: str | None = None
    """A sitting's drafts run whose edited wordings these are: stored as a run of kind
    :data:`LABEL_EDITS_KIND` recording ``editsOf``, so ``latest`` and ``store runs`` never take it for a
    retrieval run of its own."""

    def __post_init__(self) -> None:
        if not (isinstance(self.floor, int | float) and math.isfinite(self.floor) and 0 <= self.floor <= 1):
            raise NomadLabError(f"retrieval floor: expected a number between 0 and 1, got {self.floor!r}")
        if not (isinstance(self.top_k, int) and self.top_k >= 1):
            raise NomadLabError(f"retrieval top_k: expected a positive integer, got {self.top_k!r}")


@dataclass
class RetrievalRun:
    """A stored retrieval run (``run_id``) and what its report shows beyond the stored rows."""

    run_id: str
    meta: dict[str, Any]
    build: BuildStats
    cases: list[CaseResult]
    records: list[CaseRecord]
    overall: AggregateMetrics
    intervals: dict[str, Interval | None]
    by_tag: dict[str, AggregateMetrics]
    tag_intervals: dict[str, dict[str, Interval | None]]
    unresolved_chunks: int
    by_kind: dict[str, AggregateMetrics] = field(default_factory=dict)
    """The refusals of each kind (:mod:`nomad_lab.data.refusal_kinds`) aggregated apart, so a leak is read
    per kind: the off_topic suite holds near-domain questions too."""
    kind_intervals: dict[str, dict[str, Interval | None]] = field(default_factory=dict)
    judge_stats: JudgeStats | None = None
    judge_cache_hits: int = 0
    ablation: dict[str, Any] | None = None


def _pool(candidates: Sequence[Candidate]) -> list[PoolEntry]:
    return [
        PoolEntry(rank, c.doc_id, c.chunk_id, c.final, c.semantic_score)
        for rank, c in enumerate(candidates, start=1)
    ]


def metric_rows(
    metrics: dict[str, float | None], intervals: dict[str, Interval | None], scope: str
) -> list[MetricRow]:
    """``run_metrics`` rows: ``(scope, name, value, low, high, method)`` per metric."""
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


def retrieve(
    request: RetrievalRequest, embedder: Embedder | None = None, judge_backend: Backend | None = None
) -> RetrievalRun:
    """Retrieve ``request.suite`` into the store; the stored run (``.run_id``) and its run-time facts.

    ``judge_backend`` replaces the backend ``request.judge_model`` names (the spec still keys the cache).
    Every input is checked before anything slow or stateful: corpus, goldens and the judge spec (a bad
    spec or a missing model package) before the store is opened, the store before the embedder loads.
    Each verdict is committed as it is computed, so a killed run loses at most the call in flight.
    """
    corpus = load_corpus(request.corpus_dir, include_distractors=request.include_distractors)
    goldens = load_suites(request.goldens_dir, request.suite, corpus.all_doc_ids, drafts=request.drafts)
    if request.judge_model and judge_backend is None:
        judge_backend = open_backend(request.judge_model)  # cheap: validates, loads no model
    created_at = iso_now()
    k_values = request.k_values
    with Store(request.store_path) as store:
        embedder = embedder or load_embedder(request.embedder)
        index, build = build_index(corpus, store, embedder, progress=request.progress, index=request.index)
        judge = None
        if request.judge_model:
            judge = CachedJudge(request.judge_model, store, request.judge_retry_failed, judge_backend)
        texts = [g.retrieval_text(request.standalone) for g in goldens]
        vectors = stored_query_vectors(store, embedder, texts, progress=request.progress)
        cases: list[CaseResult] = []
        records: list[CaseRecord] = []
        pools: dict[str, list[PoolEntry]] = {}
        unresolved = 0
        ablation = Ablation(k_values, request.top_k) if request.ablate else None
        bar = tqdm(goldens, desc=f"retrieval {request.suite}", unit="q", disable=not request.progress)
        for position, (golden, text, vector) in enumerate(zip(bar, texts, vectors, strict=True)):
            ranked = index.search(text, request.top_k, request.score_threshold, request.floor, vector)
            chunks = ranked.chunks
            if ablation is not None:
                ablation.add(golden, ranked)
            judge_record = None
            if judge is not None and chunks:  # the judge runs only when the floor left something
                chunks, judge_record = judge(text, chunks)
            unresolved += sum(1 for c in chunks if c.doc_id is None)
            case = score_case(
                golden.id,
                [RetrievedChunk(c.doc_id, c.final, c.semantic_score) for c in chunks],
                golden.relevant_doc_ids,
                golden.expect_refusal,
                golden.tags,
                k_values,
            )
            cases.append(case)
            pools[golden.id] = _pool(ranked.stages.candidates)
            case_json = case.to_json()
            case_json["belowFloor"] = ranked.floor.below_floor
            case_json["candidates"] = ranked.floor.candidates
            records.append(
                CaseRecord(
                    golden.id,
                    position,
                    golden.tags,
                    golden.expect_refusal,
                    golden.relevant_doc_ids,
                    golden.suite,
                    text,
                    case_json,
                    judge_record,
                    golden.refusal_kind if golden.kind_given else None,
                )
            )

        overall = aggregate(cases, k_values)
        intervals = metric_intervals(cases, k_values)
        by_tag = aggregate_by_tag(cases, k_values)
        by_kind = {
            kind: [c for c, g in zip(cases, goldens, strict=True) if g.refusal_kind == kind]
            for kind in REFUSAL_KINDS
        }
        kind_intervals = {k: metric_intervals(c, k_values) for k, c in by_kind.items() if c}
        by_kind_metrics = {k: aggregate(c, k_values) for k, c in by_kind.items() if c}
        tag_intervals = {
            tag: metric_intervals([c for c in cases if tag in c.tags], k_values) for tag in by_tag
        }
        params = {
            "topK": request.top_k,
            "scoreThreshold": request.score_threshold,
            "minFinalScore": request.floor,
            "kValues": list(k_values),
            "suite": request.suite,
            "includeDistractors": request.include_distractors,
            "excludedDocs": list(corpus.excluded),
            "judgeModel": request.judge_model,
            "embeddingModel": embedder.name,
            "embeddingMethod": embedder.method,
            "embedder": embedder.identity(),
            "ingestParts": index.params.parts(),
            **({"index": index.index_spec.identity()} if index.index_spec.kind != "exact" else {}),
            **({"standalone": True} if request.standalone else {}),
            **({"editsOf": request.edits_of} if request.edits_of else {}),
        }
        kind = LABEL_EDITS_KIND if request.edits_of else "retrieval"
        git = git_state()
        versions = {**package_versions(), "embeddingModel": embedder.model_version}
        meta = {
            "kind": kind,
            "createdAt": created_at,
            "corpusFingerprint": index.fingerprint,
            **git,
            "nomadVersion": versions.get("nomad-lab"),
            "platform": platform_info(),
            "params": params,
            "versions": versions,
        }
        rows = metric_rows(overall.metrics(), intervals, "all")
        for tag, agg in by_tag.items():
            rows += metric_rows(agg.metrics(), tag_intervals[tag], f"tag:{tag}")
        run = RunRecord.with_git(
            git,
            kind=kind,
            fingerprint=index.fingerprint,
            params=params,
            suite=request.suite,
            versions=versions,
        )
        run_id = store.put_run(run, records, pools, rows)

    return RetrievalRun(
        run_id=run_id,
        meta=meta,
        build=build,
        cases=cases,
        records=records,
        overall=overall,
        intervals=intervals,
        by_tag=by_tag,
        tag_intervals=tag_intervals,
        by_kind=by_kind_metrics,
        kind_intervals=kind_intervals,
        unresolved_chunks=unresolved,
        judge_stats=None if judge is None else judge.stats,
        judge_cache_hits=0 if judge is None else judge.cache_hits,
        ablation=None if ablation is None else ablation.table(),
    )
