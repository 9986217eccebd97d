"""Retrieval metrics (SPEC §8.2): hand-checked cases, the reference's quirks, and a cross-check against
trec_eval (through ir_measures / pytrec_eval) on random runs where the definitions coincide."""

from __future__ import annotations

import math
import random

import ir_measures
import pytest

from nomad_lab.eval.retrieval_metrics import (
    RetrievedChunk,
    aggregate,
    aggregate_by_tag,
    bootstrap_mean_interval,
    case_from_json,
    metric_intervals,
    nearest_rank_percentile,
    score_case,
    wilson_interval,
)


def chunks(*doc_ids: str | None, start: float = 0.9) -> list[RetrievedChunk]:
    return [RetrievedChunk(d, start - 0.01 * i, start - 0.1 - 0.01 * i) for i, d in enumerate(doc_ids)]


def test_hand_checked_case_with_repeated_docs_and_nulls() -> None:
    # chunks: x, a, a, None, b ; relevant {a, b, c}
    case = score_case("q", chunks("x", "a", "a", None, "b"), ["a", "b", "c"])
    assert case.retrieved_doc_ids == ("x", "a", "b")  # collapsed, first-seen, nulls dropped
    assert case.recall == {1: 0.0, 3: 1 / 3, 5: 2 / 3, 10: 2 / 3}
    assert case.hit_rate == {1: 0.0, 3: 1.0, 5: 1.0, 10: 1.0}
    # chunk-level precision, not deduped; denominator = chunks returned among the first k
    assert case.precision == {1: 0.0, 3: 2 / 3, 5: 3 / 5, 10: 3 / 5}
    assert case.reciprocal_rank == 0.5
    idcg3 = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert case.ndcg[1] == 0.0
    assert case.ndcg[3] == pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / idcg3)
    assert case.ndcg[10] == case.ndcg[3]
    assert not case.empty and case.top == RetrievedChunk("x", 0.9, 0.8)


def test_short_and_empty_results_and_refusals() -> None:
    short = score_case("q", chunks("a"), ["a"])
    assert short.precision[5] == 1.0  # 1 relevant of the 1 returned, not 1/5
    empty = score_case("q", [], ["a"])
    assert empty.empty and empty.top is None
    assert (empty.recall[5], empty.precision[5], empty.ndcg[5], empty.reciprocal_rank) == (0.0, 0.0, 0.0, 0.0)
    refusal = score_case("r", chunks("a"), [], expect_refusal=True)
    assert refusal.recall[5] is None and refusal.ndcg[5] is None and refusal.reciprocal_rank is None


def test_aggregate_ignores_nulls_and_computes_leak_rate() -> None:
    cases = [
        score_case("a1", chunks("a"), ["a"], tags=["t1"]),
        score_case("a2", [], ["b"], tags=["t1", "t2"]),
        score_case("r1", chunks("z"), [], True, ["t2"]),
        score_case("r2", [], [], True, ["t2"]),
        score_case("r3", chunks("a", "b"), [], True, ["t3"]),
    ]
    agg = aggregate(cases)
    assert (agg.cases, agg.answerable, agg.refusals) == (5, 2, 3)
    assert agg.recall[5] == 0.5 and agg.mrr == 0.5
    assert agg.empty_rate_on_answerable == 0.5
    assert agg.non_empty_rate_on_refusal == pytest.approx(2 / 3)
    # refusal chunks count only as irrelevant; semantic side reads semanticScore
    assert agg.relevant_scores.count == 1 and agg.irrelevant_scores.count == 3
    assert agg.relevant_final_scores.max == 0.9 and agg.relevant_scores.max == pytest.approx(0.8)
    flat = agg.metrics()
    assert list(flat)[:4] == ["recall@1", "recall@3", "recall@5", "recall@10"]
    assert list(flat)[-3:] == ["mrr", "emptyRateOnAnswerable", "nonEmptyRateOnRefusal"]
    by_tag = aggregate_by_tag(cases)
    assert list(by_tag) == ["t1", "t2", "t3"]
    assert by_tag["t1"].non_empty_rate_on_refusal is None and by_tag["t1"].empty_rate_on_answerable == 0.5
    assert by_tag["t2"].non_empty_rate_on_refusal == 0.5 and by_tag["t3"].recall[5] is None
    only_refusals = aggregate([cases[2]])
    assert only_refusals.recall[5] is None and only_refusals.empty_rate_on_answerable is None


def test_nearest_rank_percentiles() -> None:
    values = [float(v) for v in range(1, 11)]
    assert nearest_rank_percentile(values, 10) == 1.0
    assert nearest_rank_percentile(values, 50) == 5.0
    assert nearest_rank_percentile(values, 90) == 9.0
    assert nearest_rank_percentile([3.0], 90) == 3.0
    assert nearest_rank_percentile(values, 0) == 1.0  # clamped at index 0


def test_wilson_interval_matches_the_closed_form() -> None:
    iv = wilson_interval(12, 18)
    assert (iv.low, iv.high, iv.method, iv.n) == (
        pytest.approx(0.4375, abs=1e-4),
        pytest.approx(0.8372, abs=1e-4),
        "wilson",
        18,
    )
    zero = wilson_interval(0, 10)
    assert zero.low == 0.0 and zero.high == pytest.approx(0.2775, abs=1e-4)  # not a zero-width interval
    assert wilson_interval(0, 0) is None


def test_bootstrap_interval_is_seeded_and_brackets_the_mean() -> None:
    values = [0.0, 1.0] * 20 + [1.0] * 10
    a, b = bootstrap_mean_interval(values), bootstrap_mean_interval(values)
    assert a == b and a.method == "bootstrap"
    assert a.low < sum(values) / len(values) < a.high
    assert bootstrap_mean_interval([1.0, 1.0]).low == 1.0 and bootstrap_mean_interval([]) is None


@pytest.mark.parametrize("seed", [0, 7, 20261202, 2**40 + 3])
def test_the_bootstrap_draws_exactly_what_the_standard_library_loop_drew(seed: int) -> None:
    """Published intervals were made by ``random.choices`` and ``sum``; numpy must give the same numbers."""
    import random

    from nomad_lab.eval.retrieval_metrics import resampled_means

    draw = random.Random(seed)
    for n in (2, 3, 97, 611):
        values = [draw.choice([0.0, 1.0, 0.5, 1 / 3, draw.random()]) for _ in range(n)]
        rng = random.Random(seed)
        loop = sorted(sum(rng.choices(values, k=n)) / n for _ in range(300))
        assert resampled_means(values, 300, seed) == loop


def test_every_metric_gets_an_interval() -> None:
    cases = [
        score_case("a", chunks("a"), ["a"]),
        score_case("b", chunks("x"), ["b"]),
        score_case("r", chunks("x"), [], True),
    ]
    intervals = metric_intervals(cases)
    assert set(intervals) == set(aggregate(cases).metrics())
    assert intervals["hitRate@5"].method == "wilson" and intervals["recall@5"].method == "bootstrap"
    assert intervals["nonEmptyRateOnRefusal"].n == 1


def test_case_json_round_trip() -> None:
    case = score_case("q", chunks("x", "a", None), ["a"], tags=["t"])
    data = case.to_json()
    assert data["recall"]["5"] == 1.0 and data["top"] == {"score": 0.9, "semanticScore": pytest.approx(0.8)}
    assert data["retrievedCount"] == 3 and data["retrievedDocIds"] == ["x", "a"]
    assert case_from_json(data) == case


def test_cross_check_against_trec_eval() -> None:
    """Where definitions coincide (one chunk per doc, no null doc ids, >= k chunks for P@k), our values
    equal trec_eval's R@k, P@k, nDCG@k (binary gains) and RR."""
    from ir_measures import RR, P, R, nDCG

    rng = random.Random(7)
    docs = [f"d{i}" for i in range(25)]
    qrels, run, ours = [], [], {}
    for q in range(60):
        qid = f"q{q}"
        relevant = rng.sample(docs, rng.randint(1, 4))
        ranking = rng.sample(docs, rng.randint(10, 15))
        for d in relevant:
            qrels.append(ir_measures.Qrel(qid, d, 1))
        for i, d in enumerate(ranking):
            run.append(ir_measures.ScoredDoc(qid, d, 100.0 - i))  # strictly decreasing: no tie reordering
        ours[qid] = score_case(qid, [RetrievedChunk(d, 1 - i / 100) for i, d in enumerate(ranking)], relevant)
    measures = [m @ k for k in (1, 3, 5, 10) for m in (R, P, nDCG)] + [RR]
    checked = 0
    for metric in ir_measures.iter_calc(measures, qrels, run):
        case = ours[metric.query_id]
        name = str(metric.measure)
        if name == "RR":
            expected = case.reciprocal_rank
        else:
            k = metric.measure["cutoff"]
            expected = {"R": case.recall, "P": case.precision, "nDCG": case.ndcg}[metric.measure.NAME][k]
        assert expected == pytest.approx(metric.value, abs=1e-9), (metric.query_id, name)
        checked += 1
    assert checked == 60 * 13
