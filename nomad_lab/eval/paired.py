"""Paired significance for ``eval compare``: is a metric's move more than question-sampling noise?

Why beside the 0.02 tolerance rule: the tolerance says how big a move matters, not whether a move of
that size could come from which questions happened to be in the suite. Both reports scored the same
questions, so the tests are paired per question:

- binary per-question outcomes (``hitRate@k``; ``nonEmptyRateOnRefusal``: a refusal question got chunks;
  ``emptyRateOnAnswerable``: an answerable one got none) use the exact McNemar test (only questions whose
  outcome changed carry information);
- graded outcomes (``recall@k``, ``precision@k``, ``ndcg@k``, ``mrr``) use a seeded paired bootstrap of
  the mean difference (``gate.stats.paired_bootstrap``).

Questions are matched by id; a question in only one report, or undefined in either, is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from nomad_lab.eval.reports import EvalReport
from nomad_lab.gate.stats import PairedTest, mcnemar_exact, paired_bootstrap

__all__ = ["paired_tests", "per_question"]

Case = Mapping[str, Any]


def _at(field: str, k: str) -> Callable[[Case], float | None]:
    return lambda case: (case.get(field) or {}).get(k)


def _binary(case_kind: bool, outcome: Callable[[Case], bool]) -> Callable[[Case], float | None]:
    """Defined only on refusal cases (``case_kind`` True) or only on answerable ones."""
    return lambda case: float(outcome(case)) if bool(case.get("expectRefusal")) is case_kind else None


def _empty(case: Case) -> bool:
    return bool(case.get("empty", not case.get("retrievedCount")))


FIELDS = {"recall": "recall", "hitRate": "hitRate", "precision": "precision", "ndcg": "ndcg"}
BINARY = {"hitRate", "nonEmptyRateOnRefusal", "emptyRateOnAnswerable"}


def extractor(metric: str) -> Callable[[Case], float | None] | None:
    """The per-question value behind an aggregate metric name, or None for metrics without one."""
    name, _, k = metric.partition("@")
    if name in FIELDS and k:
        return _at(FIELDS[name], k)
    if metric == "mrr":
        return lambda case: case.get("reciprocalRank")
    if metric == "nonEmptyRateOnRefusal":
        return _binary(True, lambda case: not _empty(case))
    if metric == "emptyRateOnAnswerable":
        return _binary(False, _empty)
    return None


def per_question(baseline: EvalReport, current: EvalReport, metric: str) -> tuple[list[float], list[float]]:
    """Matched (baseline, current) values of ``metric`` over questions defined in both reports."""
    get = extractor(metric)
    if get is None:
        return [], []
    before = {c.get("id"): get(c) for c in baseline.cases}
    pairs = [(before.get(c.get("id")), get(c)) for c in current.cases if c.get("id") in before]
    kept = [(a, b) for a, b in pairs if a is not None and b is not None]
    return [float(a) for a, _ in kept], [float(b) for _, b in kept]


def paired_tests(baseline: EvalReport, current: EvalReport) -> dict[str, PairedTest]:
    """A paired test per metric that has per-question values in both reports."""
    tests: dict[str, PairedTest] = {}
    for metric in sorted(set(baseline.metrics) & set(current.metrics)):
        a, b = per_question(baseline, current, metric)
        if not a:
            continue
        if metric.partition("@")[0] in BINARY:
            tests[metric] = mcnemar_exact([v >= 0.5 for v in a], [v >= 0.5 for v in b])
        else:
            tests[metric] = paired_bootstrap(a, b)
    return tests
