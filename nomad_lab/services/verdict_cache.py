"""The relevance judge behind a verdict cache in the store: a verdict is computed once per exact input.

Studies, the retrieval eval and the Dask grid all judge through :class:`CachedJudge` (or read the same
key from :func:`judge_passages_and_key`), so a rerun, a larger sample or another study over the same
pools never asks a model the same question twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard

from nomad_lab.backends import Backend, open_backend
from nomad_lab.core.judge_prompt import build_judge_input
from nomad_lab.core.reference import RAG_DEFAULT_TOP_K
from nomad_lab.gate.reference_ranking import Candidate, apply_relevance_floor, apply_source_diversity
from nomad_lab.services.judge_service import JudgeResult, JudgeStats, RelevanceJudge
from nomad_lab.store import ChunkRecord, PoolEntry, Store, Verdict, judge_input_sha256

__all__ = ["CachedJudge", "cached_result", "judge_passages_and_key", "judged_set", "verdict_reusable"]


def judged_set(
    entries: Sequence[PoolEntry], chunks: dict[str, ChunkRecord], floor: float, top_k: int = RAG_DEFAULT_TOP_K
) -> list[Candidate]:
    """What retrieval returns for one stored pool at ``floor``: the passages the judge reads."""
    candidates = [
        Candidate(
            text=chunks[e.chunk_id].text if e.chunk_id in chunks else "",
            semantic_score=e.semantic_score,
            source=chunks[e.chunk_id].source if e.chunk_id in chunks else None,
            doc_id=e.doc_id,
            chunk_id=e.chunk_id,
            score=e.score,
        )
        for e in sorted(entries, key=lambda e: e.rank)
    ]
    return apply_source_diversity(apply_relevance_floor(candidates, floor).kept)[:top_k]


def judge_passages_and_key(question: str, chunks: Sequence[Candidate]) -> tuple[list[dict[str, str]], str]:
    """The passages the judge reads and the verdict-cache key of that exact judge input."""
    passages = [{"text": c.text} for c in chunks]  # eval-corpus markdown carries no titles (SPEC §1.3)
    return passages, judge_input_sha256(build_judge_input(question, passages))


def verdict_reusable(
    cached: Verdict | None, *, retry_failed: bool = False, reask_confidence: bool = False
) -> TypeGuard[Verdict]:
    """The cache's one reuse rule: a stored verdict is used unless it failed open and ``retry_failed``,
    or it predates the confidence read and ``reask_confidence``. :class:`CachedJudge` and the Dask
    filler (``runners.cluster``) both decide by it, so the grid and the study agree on what is missing."""
    if cached is None or (not cached.ok and retry_failed):
        return False
    return cached.confidence_asked or not reask_confidence


def cached_result(cached: Verdict, chunks: Sequence[Any]) -> JudgeResult:
    """A stored verdict as the judge's result on ``chunks`` (what it keeps, what it rejected), as if
    the judge had just said it: what :class:`JudgeStats` counts and a pipeline keeps."""
    rejected = len(chunks) if cached.on_topic is False else 0
    return JudgeResult(
        [] if rejected else list(chunks),
        rejected,
        cached.ok,
        cached.on_topic,
        cached.reason,
        cached.ms or 0.0,
        cached.prompt_tokens,
        p_true=cached.p_true,
        confidence_reason=cached.confidence_reason,
    )


class CachedJudge:
    """A relevance judge whose verdicts are read from, or written to, the store.

    The key is (judge spec, SHA-256 of the exact judge user turn from
    ``nomad_lab.core.judge_prompt.build_judge_input``), so the same question over the same passages is never
    sent to the same model twice. Failed-open verdicts are cached too (a rerun reproduces the run);
    ``retry_failed`` asks again for those. Verdicts stored before the judge read its confidence keep a
    null P(true) and are not asked again unless ``reask_confidence`` says so. Every call actually made is
    also logged in the store's ``model_calls`` (purpose ``judge``), whose ``request_sha256`` covers the
    whole request, not just the judge input; a cache hit makes no call and logs nothing.
    """

    def __init__(
        self,
        spec: str,
        store: Store,
        retry_failed: bool = False,
        backend: Backend | None = None,
        *,
        reask_confidence: bool = False,
    ):
        self.spec = spec
        self.store = store
        self.retry_failed = retry_failed
        self.reask_confidence = reask_confidence
        self.judge = RelevanceJudge(backend if backend is not None else open_backend(spec), sink=store)
        self.stats = JudgeStats(model=spec)
        self.cache_hits = 0

    def __call__(self, question: str, chunks: Sequence[Candidate]) -> tuple[list[Candidate], dict[str, Any]]:
        """The chunks the judge keeps (all or none) and a record of the verdict for the case result."""
        passages, key = judge_passages_and_key(question, chunks)
        cached = self.store.get_verdict(self.spec, key)
        if self.reusable(cached):
            self.cache_hits += 1
            result = cached_result(cached, chunks)
        else:
            result = self.judge.judge(question, passages)
            self.store.put_verdict(self.spec, key, Verdict.of(result))
        self.stats.record(result)
        kept = [] if result.judged and result.verdict is False else list(chunks)
        record = {
            "inputSha256": key,
            "onTopic": result.verdict,
            "judged": result.judged,
            "reason": result.reason,
            "ms": result.ms,
            "cached": cached is not None,
            "pTrue": result.p_true,
            "confidenceReason": result.confidence_reason,
        }
        return kept, record

    def reusable(self, cached: Verdict | None) -> TypeGuard[Verdict]:
        """:func:`verdict_reusable` under this judge's ``retry_failed`` and ``reask_confidence``."""
        return verdict_reusable(
            cached, retry_failed=self.retry_failed, reask_confidence=self.reask_confidence
        )
