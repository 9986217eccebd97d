"""``eval compare``'s paired tests: McNemar on per-question yes/no outcomes, paired bootstrap on recall."""

from __future__ import annotations

import pytest
from scipy import stats as sps

from nomad_lab.eval.paired import paired_tests, per_question
from nomad_lab.eval.reports import EvalReport, compare_reports, render_comparison_markdown


def case(i: int, refusal: bool, empty: bool, recall: float | None = None) -> dict:
    return {
        "id": f"q{i}",
        "expectRefusal": refusal,
        "empty": empty,
        "retrievedCount": 0 if empty else 3,
        "recall": {"5": recall},
        "hitRate": {"5": None if recall is None else float(recall > 0)},
        "reciprocalRank": recall,
    }


def report(cases: list[dict]) -> EvalReport:
    meta = {"kind": "retrieval", "corpusFingerprint": "0123456789abcdef"}
    refusals = [c for c in cases if c["expectRefusal"]]
    answerable = [c for c in cases if not c["expectRefusal"]]
    metrics = {
        "nonEmptyRateOnRefusal": sum(not c["empty"] for c in refusals) / len(refusals),
        "recall@5": sum(c["recall"]["5"] for c in answerable) / len(answerable),
        "hitRate@5": sum(c["hitRate"]["5"] for c in answerable) / len(answerable),
    }
    return EvalReport(meta, metrics, cases=cases)


def build() -> tuple[EvalReport, EvalReport]:
    # 20 refusals: baseline leaks on q0..q9, current only on q0, q1 -> 8 discordant, all one way
    # 10 answerable: recall moves 1.0 -> 0.5 on q20..q23, unchanged elsewhere (0.0 -> 1.0 never)
    base = [case(i, True, empty=i >= 10) for i in range(20)]
    cur = [case(i, True, empty=i >= 2) for i in range(20)]
    base += [case(i, False, False, 1.0) for i in range(20, 30)]
    cur += [case(i, False, False, 0.5 if i < 24 else 1.0) for i in range(20, 30)]
    return report(base), report(list(reversed(cur)))  # matched by id, not by position


def test_mcnemar_counts_only_the_questions_that_changed() -> None:
    baseline, current = build()
    tests = paired_tests(baseline, current)
    leak = tests["nonEmptyRateOnRefusal"]
    assert leak.method == "exact McNemar" and leak.n == 20
    assert leak.p_value == pytest.approx(sps.binomtest(0, 8, 0.5).pvalue) == pytest.approx(2 * 0.5**8)
    assert leak.statistic == pytest.approx(-8 / 20)
    assert tests["hitRate@5"].p_value == 1.0  # no question changed its hit


def test_recall_is_a_paired_bootstrap_of_the_mean_difference() -> None:
    baseline, current = build()
    a, b = per_question(baseline, current, "recall@5")
    assert len(a) == 10 and sum(b) - sum(a) == pytest.approx(-2.0)
    test = paired_tests(baseline, current)["recall@5"]
    assert test.method == "paired bootstrap" and test.statistic == pytest.approx(-0.2)
    assert test.low < -0.2 < test.high <= 0 and test.p_value < 0.05


def test_the_markdown_puts_each_test_beside_the_tolerance_verdict() -> None:
    baseline, current = build()
    comparison = compare_reports(baseline, current, 0.02)
    text = render_comparison_markdown(comparison, "base", paired_tests(baseline, current))
    rows = [line for line in text.splitlines() if line.startswith("| nonEmptyRateOnRefusal")]
    assert rows[0].endswith("| improved |")  # the tolerance verdict, as before
    assert rows[1].startswith("| nonEmptyRateOnRefusal | exact McNemar | 20 | -0.4000 [") and rows[
        1
    ].endswith("| 0.00781 |")
