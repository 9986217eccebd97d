"""The reference's rerank formula, relevance floor, source diversity and stage capture (SPEC §2.3–2.5).

These three steps decide which retrieved chunks reach the prompt; the floor is the gate whose leak rate
nomad-lab measures. They are kept pure (standard library only) so a stored candidate pool can be re-gated
offline without a model, and so the formula can be checked against worked examples by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from nomad_lab.core.reference import (
    DIRECT_MATCH_BOOST,
    DIVERSITY_PENALTY,
    HEADING_BOOST,
    KEYWORD_BOOST,
    MIN_QUERY_TERM_LENGTH,
    MIN_SEMANTIC_THRESHOLD,
    RAG_DEFAULT_SCORE_THRESHOLD,
    RAG_DEFAULT_TOP_K,
    RAG_MIN_FINAL_SCORE,
    RAG_MIN_RELEVANCE_PRESETS,
)
from nomad_lab.gate.keywords import js_split_whitespace

__all__ = [
    "DIVERSITY_PENALTY",
    "MIN_SEMANTIC_THRESHOLD",
    "RAG_DEFAULT_SCORE_THRESHOLD",
    "RAG_DEFAULT_TOP_K",
    "RAG_MIN_FINAL_SCORE",
    "RAG_MIN_RELEVANCE_PRESETS",
    "Candidate",
    "FloorResult",
    "RankedResult",
    "RetrievalStages",
    "apply_relevance_floor",
    "apply_source_diversity",
    "rank_candidates",
    "rerank",
    "rerank_score",
]


@dataclass(frozen=True)
class Candidate:
    """One retrieved chunk with its raw cosine (``semantic_score``) and, once reranked, its ``score``.

    ``keywords`` is the stored space-joined keyword payload; the title fields exist for the heading boost
    (eval-corpus markdown has none, so that boost never fires there). ``doc_id`` is the resolved corpus
    document (None when the source is not in the corpus) and ``chunk_id`` our stable chunk key.
    """

    text: str
    semantic_score: float
    source: str | None = None
    keywords: str = ""
    document_id: str | None = None
    full_title: str | None = None
    section_title: str | None = None
    article_title: str | None = None
    doc_id: str | None = None
    chunk_id: str | None = None
    chunk_index: int | None = None
    score: float | None = None

    @property
    def final(self) -> float:
        """The reranked score, or the cosine before reranking."""
        return self.semantic_score if self.score is None else self.score

    @property
    def diversity_key(self) -> str:
        """``document_id || source || "unknown"`` (JS truthiness: empty strings fall through)."""
        return self.document_id or self.source or "unknown"


def rerank_score(candidate: Candidate, query_keywords: Sequence[str], original_query: str) -> float:
    """The final score of one candidate (§2.3).

    Below a cosine of 0.35 the score is the cosine itself (no boosts, no cap). Otherwise
    ``s + direct + heading + keyword``, capped at 1.0 once at the end, where
    - keyword = sqrt(matching/len(keywords)) * 0.10 * s, a keyword matching if it is in the stored keyword
      list or a substring of the lower-cased text;
    - direct = sqrt(hits/len(terms)) * 0.075 * s over the terms of the UN-expanded query longer than 3
      characters, punctuation left on ("water?" must appear verbatim), hits being substrings of the text;
    - heading = sqrt(hits/len(keywords)) * 0.10 * s over keywords found in the joined titles.
    """
    s = candidate.semantic_score
    if s < MIN_SEMANTIC_THRESHOLD:
        return s
    text = candidate.text.lower()
    doc_keywords = [word for word in (candidate.keywords or "").lower().split(" ") if word]
    n_keywords = max(len(query_keywords), 1)
    matching = [kw for kw in query_keywords if kw.lower() in doc_keywords or kw.lower() in text]
    keyword_boost = math.sqrt(len(matching) / n_keywords) * KEYWORD_BOOST * s

    final = s
    query_terms = [
        term for term in js_split_whitespace(original_query.lower()) if len(term) > MIN_QUERY_TERM_LENGTH
    ]
    direct_matches = sum(1 for term in query_terms if term in text)
    if query_terms and direct_matches > 0:
        final += math.sqrt(direct_matches / len(query_terms)) * DIRECT_MATCH_BOOST * s

    heading_text = " ".join(
        t for t in (candidate.full_title, candidate.section_title, candidate.article_title) if t
    ).lower()
    if heading_text:
        heading_hits = sum(1 for kw in query_keywords if kw in heading_text)
        if heading_hits > 0:
            final += math.sqrt(heading_hits / n_keywords) * HEADING_BOOST * s

    return min(1.0, final + keyword_boost)


def rerank(
    candidates: Sequence[Candidate], query_keywords: Sequence[str], original_query: str
) -> list[Candidate]:
    """Score every candidate and sort by final score, descending and stable (ties keep dense order)."""
    scored = [replace(c, score=rerank_score(c, query_keywords, original_query)) for c in candidates]
    return sorted(scored, key=lambda c: -c.final)


@dataclass(frozen=True)
class FloorResult:
    """What the floor kept, and the reference's ``RetrievalFloorStats {candidates, belowFloor}``."""

    kept: list[Candidate]
    candidates: int
    below_floor: int


def apply_relevance_floor(reranked: Sequence[Candidate], min_final_score: float) -> FloorResult:
    """Keep chunks whose final score is at least the floor; a floor <= 0 or NaN drops nothing.

    It runs before diversity on purpose: diversity is about redundancy, not relevance.
    """
    if not min_final_score > 0:  # also true for NaN
        return FloorResult(list(reranked), len(reranked), 0)
    kept = [c for c in reranked if c.final >= min_final_score]
    return FloorResult(kept, len(reranked), len(reranked) - len(kept))


def apply_source_diversity(
    chunks: Sequence[Candidate], penalty: float = DIVERSITY_PENALTY
) -> list[Candidate]:
    """Multiply a source's repeat number c (0-based, in the given order) by ``penalty**c``, then re-sort.

    Quirk kept: this can push a chunk below the floor after the floor ran; it is not re-checked.
    """
    seen: dict[str, int] = {}
    penalized = []
    for chunk in chunks:
        count = seen.get(chunk.diversity_key, 0)
        seen[chunk.diversity_key] = count + 1
        penalized.append(replace(chunk, score=chunk.final * penalty**count) if count else chunk)
    return sorted(penalized, key=lambda c: -c.final)


@dataclass
class RetrievalStages:
    """The reference's ``RetrievalStages`` sink (§2.5): each list holds Candidates with scores set.

    ``dense``: raw net order, first ``limit`` (score = cosine); ``reranked``: reranked pre-floor, first
    ``limit``; ``diversified``: post-floor post-diversity, first ``limit``; ``candidates``: the whole
    reranked pool (up to limit*3), unsliced and pre-floor: this is what the store keeps as the pool.
    """

    dense: list[Candidate] = field(default_factory=list)
    reranked: list[Candidate] = field(default_factory=list)
    diversified: list[Candidate] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)


@dataclass(frozen=True)
class RankedResult:
    """The chunks the pipeline returns, the floor statistics and the captured stages."""

    chunks: list[Candidate]
    floor: FloorResult
    stages: RetrievalStages


def rank_candidates(
    dense: Sequence[Candidate],
    query_keywords: Sequence[str],
    original_query: str,
    limit: int = RAG_DEFAULT_TOP_K,
    min_final_score: float = RAG_MIN_FINAL_SCORE,
) -> RankedResult:
    """Rerank, floor, diversify and slice a dense candidate list (already netted), capturing stages."""
    reranked = rerank(dense, query_keywords, original_query)
    floor = apply_relevance_floor(reranked, min_final_score)
    diversified = apply_source_diversity(floor.kept)
    stages = RetrievalStages(
        dense=[replace(c, score=c.semantic_score) for c in dense[:limit]],
        reranked=list(reranked[:limit]),
        diversified=list(diversified[:limit]),
        candidates=list(reranked),
    )
    return RankedResult(chunks=list(diversified[:limit]), floor=floor, stages=stages)
