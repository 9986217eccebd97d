"""Retrieval metrics of the reference's ``retrieval_metrics.ts`` (SPEC §8.2), plus 95% intervals.

Definitions follow the reference exactly, including its choices that differ from textbook IR:
precision@k divides by the number of chunks actually returned among the first k (not by k), and
nDCG@k ranks documents (chunks collapsed to unique doc ids in first-seen order), not chunks.

Intervals (not in the reference; nomad-lab adds one beside every rate because a leak rate over 18
questions is ±20 points):
- proportions of cases (hitRate@k, emptyRateOnAnswerable, nonEmptyRateOnRefusal) get the **Wilson score
  interval** (z = 1.96), which stays inside [0, 1] and behaves at 0% and 100%, where the normal
  approximation collapses to a zero-width interval;
- means of per-case values in [0, 1] (recall@k, precision@k, ndcg@k, mrr) get a **percentile bootstrap**
  over cases (2,000 resamples, seeded, so a report is reproducible).
Pure: the standard library, and numpy inside the bootstrap only (the same numbers, faster).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_K_VALUES",
    "AggregateMetrics",
    "CaseResult",
    "Interval",
    "RetrievedChunk",
    "ScoreDistribution",
    "aggregate",
    "aggregate_by_tag",
    "bootstrap_mean_interval",
    "metric_intervals",
    "nearest_rank_percentile",
    "score_case",
    "wilson_interval",
]

DEFAULT_K_VALUES: tuple[int, ...] = (1, 3, 5, 10)
Z_95 = 1.959963984540054
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261202


@dataclass(frozen=True)
class RetrievedChunk:
    """One returned chunk as the metrics see it: its resolved doc id (None if unresolvable) and scores."""

    doc_id: str | None
    score: float
    semantic_score: float | None = None


@dataclass(frozen=True)
class CaseResult:
    """Per-question metrics (§8.2 case fields). Metric maps are keyed by k; None means "not defined"."""

    id: str
    tags: tuple[str, ...]
    expect_refusal: bool
    relevant_doc_ids: tuple[str, ...]
    retrieved_doc_ids: tuple[str, ...]
    chunks: tuple[RetrievedChunk, ...]
    recall: dict[int, float | None]
    hit_rate: dict[int, float | None]
    precision: dict[int, float | None]
    ndcg: dict[int, float | None]
    reciprocal_rank: float | None

    @property
    def empty(self) -> bool:
        return not self.chunks

    @property
    def top(self) -> RetrievedChunk | None:
        return self.chunks[0] if self.chunks else None

    def to_json(self) -> dict[str, Any]:
        """The reference's case shape, with our ``chunks`` list so a report can be re-aggregated."""
        top = self.top
        return {
            "id": self.id,
            "tags": list(self.tags),
            "retrievedCount": len(self.chunks),
            "relevantDocIds": list(self.relevant_doc_ids),
            "retrievedDocIds": list(self.retrieved_doc_ids),
            "expectRefusal": self.expect_refusal,
            "recall": {str(k): v for k, v in self.recall.items()},
            "hitRate": {str(k): v for k, v in self.hit_rate.items()},
            "precision": {str(k): v for k, v in self.precision.items()},
            "ndcg": {str(k): v for k, v in self.ndcg.items()},
            "reciprocalRank": self.reciprocal_rank,
            "empty": self.empty,
            "top": None if top is None else {"score": top.score, "semanticScore": top.semantic_score},
            "chunks": [
                {"docId": c.doc_id, "score": c.score, "semanticScore": c.semantic_score} for c in self.chunks
            ],
        }


def _doc_ranking(chunks: Sequence[RetrievedChunk]) -> tuple[str, ...]:
    """Chunks collapsed to unique doc ids in first-seen order; unresolvable chunks dropped."""
    return tuple(dict.fromkeys(c.doc_id for c in chunks if c.doc_id is not None))


def score_case(
    case_id: str,
    chunks: Sequence[RetrievedChunk],
    relevant_doc_ids: Iterable[str],
    expect_refusal: bool = False,
    tags: Iterable[str] = (),
    k_values: Sequence[int] = DEFAULT_K_VALUES,
) -> CaseResult:
    """Score one question over the chunks as returned (post-floor, post-judge, at most top_k)."""
    relevant = tuple(relevant_doc_ids)
    relevant_set = set(relevant)
    chunks = tuple(chunks)
    ranking = _doc_ranking(chunks)
    recall: dict[int, float | None] = {}
    hit_rate: dict[int, float | None] = {}
    precision: dict[int, float | None] = {}
    ndcg: dict[int, float | None] = {}
    reciprocal_rank: float | None = None
    if relevant_set:
        for k in k_values:
            first_k = chunks[:k]
            found = {c.doc_id for c in first_k if c.doc_id in relevant_set}
            relevant_chunks = sum(1 for c in first_k if c.doc_id in relevant_set)
            recall[k] = len(found) / len(relevant_set)
            hit_rate[k] = 1.0 if found else 0.0
            precision[k] = relevant_chunks / len(first_k) if first_k else 0.0
            dcg = sum(1 / math.log2(i + 2) for i, doc in enumerate(ranking[:k]) if doc in relevant_set)
            idcg = sum(1 / math.log2(i + 2) for i in range(min(len(relevant_set), k)))
            ndcg[k] = dcg / idcg
        first = next((i for i, c in enumerate(chunks) if c.doc_id in relevant_set), None)
        reciprocal_rank = 0.0 if first is None else 1 / (first + 1)
    else:
        for k in k_values:
            recall[k] = hit_rate[k] = precision[k] = ndcg[k] = None
    return CaseResult(
        id=case_id,
        tags=tuple(tags),
        expect_refusal=bool(expect_refusal),
        relevant_doc_ids=relevant,
        retrieved_doc_ids=ranking,
        chunks=chunks,
        recall=recall,
        hit_rate=hit_rate,
        precision=precision,
        ndcg=ndcg,
        reciprocal_rank=reciprocal_rank,
    )


@dataclass(frozen=True)
class ScoreDistribution:
    """``{count, min, p10, median, p90, max, mean}`` with nearest-rank percentiles (None when empty)."""

    count: int
    min: float | None
    p10: float | None
    median: float | None
    p90: float | None
    max: float | None
    mean: float | None

    @classmethod
    def of(cls, values: Iterable[float]) -> ScoreDistribution:
        ordered = sorted(values)
        if not ordered:
            return cls(0, None, None, None, None, None, None)
        return cls(
            count=len(ordered),
            min=ordered[0],
            p10=nearest_rank_percentile(ordered, 10),
            median=nearest_rank_percentile(ordered, 50),
            p90=nearest_rank_percentile(ordered, 90),
            max=ordered[-1],
            mean=sum(ordered) / len(ordered),
        )

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def nearest_rank_percentile(ordered: Sequence[float], p: float) -> float:
    """``sorted[min(n-1, max(0, ceil(p/100*n) - 1))]`` on an already sorted sequence."""
    n = len(ordered)
    return ordered[min(n - 1, max(0, math.ceil(p / 100 * n) - 1))]


def _mean(values: Iterable[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


@dataclass(frozen=True)
class AggregateMetrics:
    """The reference's aggregate (§8.2): means ignore nulls; rates are None when their population is empty."""

    cases: int
    answerable: int
    refusals: int
    recall: dict[int, float | None]
    hit_rate: dict[int, float | None]
    precision: dict[int, float | None]
    ndcg: dict[int, float | None]
    mrr: float | None
    empty_answerable: int
    empty_rate_on_answerable: float | None
    non_empty_refusals: int
    non_empty_rate_on_refusal: float | None
    relevant_scores: ScoreDistribution
    irrelevant_scores: ScoreDistribution
    relevant_final_scores: ScoreDistribution
    irrelevant_final_scores: ScoreDistribution

    def metrics(self) -> dict[str, float | None]:
        """The flat metric map of a report: ``recall@k`` … ``mrr``, and the two rates."""
        flat: dict[str, float | None] = {}
        for name, values in (
            ("recall", self.recall),
            ("hitRate", self.hit_rate),
            ("precision", self.precision),
            ("ndcg", self.ndcg),
        ):
            for k, value in values.items():
                flat[f"{name}@{k}"] = value
        flat["mrr"] = self.mrr
        flat["emptyRateOnAnswerable"] = self.empty_rate_on_answerable
        flat["nonEmptyRateOnRefusal"] = self.non_empty_rate_on_refusal
        return flat

    def distributions(self) -> dict[str, dict[str, Any]]:
        return {
            "relevantScores": self.relevant_scores.to_json(),
            "irrelevantScores": self.irrelevant_scores.to_json(),
            "relevantFinalScores": self.relevant_final_scores.to_json(),
            "irrelevantFinalScores": self.irrelevant_final_scores.to_json(),
        }


def aggregate(results: Sequence[CaseResult], k_values: Sequence[int] = DEFAULT_K_VALUES) -> AggregateMetrics:
    """Aggregate case results; score distributions pool every returned chunk of every case.

    A chunk is "relevant" when its doc id is among the case's relevant docs; refusal cases contribute only
    to the irrelevant side. The semantic distribution reads ``semanticScore ?? score``.
    """
    answerable = [r for r in results if not r.expect_refusal]
    refusals = [r for r in results if r.expect_refusal]
    empty_answerable = sum(1 for r in answerable if r.empty)
    non_empty_refusals = sum(1 for r in refusals if not r.empty)
    relevant_sem: list[float] = []
    irrelevant_sem: list[float] = []
    relevant_final: list[float] = []
    irrelevant_final: list[float] = []
    for r in results:
        relevant = set() if r.expect_refusal else set(r.relevant_doc_ids)
        for chunk in r.chunks:
            semantic = chunk.semantic_score if chunk.semantic_score is not None else chunk.score
            if chunk.doc_id is not None and chunk.doc_id in relevant:
                relevant_sem.append(semantic)
                relevant_final.append(chunk.score)
            else:
                irrelevant_sem.append(semantic)
                irrelevant_final.append(chunk.score)
    return AggregateMetrics(
        cases=len(results),
        answerable=len(answerable),
        refusals=len(refusals),
        recall={k: _mean(r.recall.get(k) for r in results) for k in k_values},
        hit_rate={k: _mean(r.hit_rate.get(k) for r in results) for k in k_values},
        precision={k: _mean(r.precision.get(k) for r in results) for k in k_values},
        ndcg={k: _mean(r.ndcg.get(k) for r in results) for k in k_values},
        mrr=_mean(r.reciprocal_rank for r in results),
        empty_answerable=empty_answerable,
        empty_rate_on_answerable=empty_answerable / len(answerable) if answerable else None,
        non_empty_refusals=non_empty_refusals,
        non_empty_rate_on_refusal=non_empty_refusals / len(refusals) if refusals else None,
        relevant_scores=ScoreDistribution.of(relevant_sem),
        irrelevant_scores=ScoreDistribution.of(irrelevant_sem),
        relevant_final_scores=ScoreDistribution.of(relevant_final),
        irrelevant_final_scores=ScoreDistribution.of(irrelevant_final),
    )


def aggregate_by_tag(
    results: Sequence[CaseResult], k_values: Sequence[int] = DEFAULT_K_VALUES
) -> dict[str, AggregateMetrics]:
    """The aggregate restricted to the cases carrying each tag, tags sorted."""
    tags = sorted({tag for r in results for tag in r.tags})
    return {tag: aggregate([r for r in results if tag in r.tags], k_values) for tag in tags}


@dataclass(frozen=True)
class Interval:
    """A 95% interval and how it was computed (``wilson`` or ``bootstrap``), over ``n`` cases."""

    low: float
    high: float
    method: str
    n: int

    def to_json(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "method": self.method, "n": self.n}


def wilson_interval(successes: int, n: int, z: float = Z_95) -> Interval | None:
    """Wilson score interval for a binomial proportion; None when n == 0."""
    if n <= 0:
        return None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return Interval(max(0.0, centre - half), min(1.0, centre + half), "wilson", n)


def bootstrap_mean_interval(
    values: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> Interval | None:
    """Percentile bootstrap 95% interval of a mean; None when there are no values."""
    n = len(values)
    if n == 0:
        return None
    if min(values) == max(values):
        return Interval(values[0], values[0], "bootstrap", n)
    means = resampled_means(values, resamples, seed)
    return Interval(means[int(0.025 * resamples)], means[math.ceil(0.975 * resamples) - 1], "bootstrap", n)


def resampled_means(values: Sequence[float], resamples: int, seed: int) -> list[float]:
    """The sorted means of ``resamples`` resamples of ``values``: exactly the numbers of
    ``sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))`` with ``rng =
    random.Random(seed)``, computed by numpy.

    Why numpy, and why exactly: that loop was most of a large retrieval run's scoring time (2,000
    resamples of every metric), and published intervals must not move. ``random`` and numpy's
    ``RandomState`` share the Mersenne Twister, its seeding from an integer's 32-bit words and its 53-bit
    doubles; ``choices`` picks ``floor(random() * n)``; a cumulative sum adds left to right as ``sum``
    does on this Python (3.11's float sum is not compensated)."""
    import numpy as np  # heavy: the rest of this module is the standard library

    n, words, rest = len(values), [], abs(seed)
    while True:
        words.append(rest & 0xFFFFFFFF)
        rest >>= 32
        if not rest:
            break
    uniforms = np.random.RandomState(words).random_sample((resamples, n))
    drawn = np.asarray(values, dtype=float)[np.floor(uniforms * n).astype(np.intp)]
    return np.sort(np.cumsum(drawn, axis=1)[:, -1] / n).tolist()


def metric_intervals(
    results: Sequence[CaseResult], k_values: Sequence[int] = DEFAULT_K_VALUES
) -> dict[str, Interval | None]:
    """A 95% interval for every metric of :meth:`AggregateMetrics.metrics` (see the module docstring)."""
    intervals: dict[str, Interval | None] = {}
    for k in k_values:
        hits = [r.hit_rate[k] for r in results if r.hit_rate.get(k) is not None]
        intervals[f"hitRate@{k}"] = wilson_interval(int(sum(hits)), len(hits))
        for name, attribute in (("recall", "recall"), ("precision", "precision"), ("ndcg", "ndcg")):
            values = [getattr(r, attribute)[k] for r in results if getattr(r, attribute).get(k) is not None]
            intervals[f"{name}@{k}"] = bootstrap_mean_interval(values)
    intervals["mrr"] = bootstrap_mean_interval(
        [r.reciprocal_rank for r in results if r.reciprocal_rank is not None]
    )
    answerable = [r for r in results if not r.expect_refusal]
    refusals = [r for r in results if r.expect_refusal]
    intervals["emptyRateOnAnswerable"] = wilson_interval(
        sum(1 for r in answerable if r.empty), len(answerable)
    )
    intervals["nonEmptyRateOnRefusal"] = wilson_interval(
        sum(1 for r in refusals if not r.empty), len(refusals)
    )
    return intervals


def case_from_json(data: Mapping[str, Any]) -> CaseResult:
    """Rebuild a case from its report JSON (needs the ``chunks`` list nomad-lab writes)."""
    chunks = [
        RetrievedChunk(c.get("docId"), float(c["score"]), c.get("semanticScore"))
        for c in data.get("chunks", [])
    ]
    return score_case(
        str(data["id"]),
        chunks,
        data.get("relevantDocIds", []),
        bool(data.get("expectRefusal", False)),
        data.get("tags", []),
        tuple(int(k) for k in data.get("recall", {})) or DEFAULT_K_VALUES,
    )
