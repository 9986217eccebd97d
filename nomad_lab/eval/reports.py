"""Eval reports (SPEC §8.5): the JSON and markdown a run leaves behind, and the baseline comparison.

The JSON keeps the reference's shape, ``{meta, metrics, byTag, cases}``, so a compare tool reads either
system's reports; nomad-lab adds keys beside them (``intervals``, ``distributions``, ``leaked``,
``judge``, ``index``) and never changes the meaning of the reference's keys. ``meta.platform`` carries
``pythonVersion`` where the reference has ``nodeVersion``.

:func:`compare_reports` is the reference's ``compareReports``: a different kind or corpus fingerprint
is a hard veto (numbers over different corpora or chunkings are not comparable; re-baseline instead),
and a metric regresses when it moves the wrong way by more than the tolerance (0.02 + 1e-9).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.jsfmt import js_json_dumps
from nomad_lab.data.corpus import is_fingerprint
from nomad_lab.data.golden_suites import check_doc_id
from nomad_lab.eval.provenance import provenance_record, write_provenance

__all__ = [
    "LOWER_IS_BETTER",
    "METRIC_DIRECTIONS",
    "Comparison",
    "EvalReport",
    "MetricDelta",
    "ReportError",
    "baseline_path",
    "compare_reports",
    "load_report",
    "render_comparison_markdown",
    "report_filename",
    "write_report",
]


class ReportError(NomadLabError, ValueError):
    """A report file or a name read from one cannot be used; the message says which and why."""


DEFAULT_TOLERANCE = 0.02
EPSILON = 1e-9
LOWER_IS_BETTER = frozenset(
    {
        "emptyRateOnAnswerable",
        "nonEmptyRateOnRefusal",
        "leakageRate",
        "thinkTagLeakRate",
        "historyElidedRate",
        "chunksDroppedRate",
        "promptTokenError",
    }
)


def metric_direction(name: str) -> str:
    """``lower`` for the reference's lower-is-better metrics; all others, unknown names too, ``higher``.

    (So ``meanPromptTokens`` counts as higher-is-better, as in the reference.)
    """
    return "lower" if name in LOWER_IS_BETTER else "higher"


METRIC_DIRECTIONS: Mapping[str, str] = {name: "lower" for name in sorted(LOWER_IS_BETTER)}


@dataclass
class EvalReport:
    """One eval run's report. ``extra`` holds nomad-lab's additions, written beside the reference keys."""

    meta: dict[str, Any]
    metrics: dict[str, float | None]
    by_tag: dict[str, dict[str, float | None]] = field(default_factory=dict)
    cases: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "meta": self.meta,
            "metrics": self.metrics,
            "byTag": self.by_tag,
            "cases": self.cases,
            **self.extra,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "<report>") -> EvalReport:
        for key in ("meta", "metrics"):
            if not isinstance(data.get(key), Mapping):
                raise ReportError(f"{source}: not an eval report: '{key}' is missing or not an object")
        extra = {k: v for k, v in data.items() if k not in ("meta", "metrics", "byTag", "cases")}
        return cls(
            dict(data["meta"]),
            dict(data["metrics"]),
            dict(data.get("byTag") or {}),
            list(data.get("cases") or []),
            extra,
        )

    @property
    def kind(self) -> str | None:
        return self.meta.get("kind")

    @property
    def fingerprint(self) -> str | None:
        return self.meta.get("corpusFingerprint")


def load_report(path: str | os.PathLike[str]) -> EvalReport:
    source = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"{source}: cannot read: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ReportError(f"{source}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
    if not isinstance(data, Mapping):
        raise ReportError(f"{source}: not an eval report: top level is not an object")
    return EvalReport.from_json(data, source)


def report_filename(kind: str, created_at: str, suffix: str = ".json") -> str:
    """``<kind>-<createdAt with ':' and '.' replaced by '-'>.json``, as the reference names reports."""
    return f"{kind}-{created_at.replace(':', '-').replace('.', '-')}{suffix}"


def write_report(report: EvalReport, directory: str | os.PathLike[str], markdown: str) -> tuple[Path, Path]:
    """Write ``<name>.json`` (2-space, JS-style numbers) and ``<name>.md``; returns both paths."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    stem = report_filename(str(report.kind), str(report.meta.get("createdAt")), "")
    json_path, md_path = target / f"{stem}.json", target / f"{stem}.md"
    json_path.write_text(js_json_dumps(report.to_json()) + "\n", encoding="utf-8")
    md_path.write_text(markdown, encoding="utf-8")
    fingerprint = report.meta.get("corpusFingerprint")
    record = provenance_record(
        params=report.meta.get("params") or {},
        run_id=report.meta.get("runId"),
        fingerprints=[fingerprint] if fingerprint else [],
    )
    write_provenance(target, record | {"report": md_path.name})
    return json_path, md_path


def baseline_path(baselines_dir: str | os.PathLike[str], fingerprint: str, name: str) -> Path:
    """``<baselines>/<fingerprint>/<name>.json``: a baseline only ever compares within its own corpus.

    The fingerprint comes from a report file, so it is checked before it becomes a folder name: a
    report claiming ``../../x`` must not write or read outside the baselines directory.
    """
    if not is_fingerprint(fingerprint):
        raise ReportError(f"corpus fingerprint {fingerprint!r} is not 16 lowercase hex characters")
    if problem := check_doc_id(name):
        raise ReportError(f"baseline name {name!r} {problem}")
    return Path(baselines_dir) / fingerprint / f"{name}.json"


@dataclass(frozen=True)
class MetricDelta:
    """One metric's comparison. ``improvement`` is the delta signed so that positive is better."""

    name: str
    direction: str
    baseline: float | None
    current: float | None
    only_in: str | None
    delta: float | None
    improvement: float | None
    regressed: bool
    improved: bool

    @property
    def verdict(self) -> str:
        if self.only_in == "current":
            return "new"
        if self.only_in == "baseline":
            return "removed"
        if self.improvement is None:
            return "—"
        if self.regressed:
            return "**REGRESSED**"
        return "improved" if self.improved else "within tolerance"


@dataclass(frozen=True)
class Comparison:
    comparable: bool
    reason: str | None
    tolerance: float
    deltas: list[MetricDelta]

    @property
    def regressions(self) -> list[MetricDelta]:
        return [d for d in self.deltas if d.regressed]

    @property
    def failed(self) -> bool:
        """What makes ``eval compare`` exit 1: incomparable reports or any regression."""
        return not self.comparable or bool(self.regressions)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def compare_reports(
    baseline: EvalReport, current: EvalReport, tolerance: float = DEFAULT_TOLERANCE
) -> Comparison:
    """The reference's ``compareReports``; a null on either side gives no delta and never regresses."""
    if baseline.kind != current.kind:
        return Comparison(
            False, f"different kinds ({baseline.kind} vs {current.kind}): not comparable", tolerance, []
        )
    if baseline.fingerprint != current.fingerprint:
        return Comparison(
            False,
            f"different corpus fingerprints ({baseline.fingerprint} vs {current.fingerprint}): "
            "not comparable. "
            "Re-baseline instead.",
            tolerance,
            [],
        )
    deltas = []
    for name in sorted(set(baseline.metrics) | set(current.metrics)):
        only_in = None
        if name not in baseline.metrics:
            only_in = "current"
        elif name not in current.metrics:
            only_in = "baseline"
        base, cur = _number(baseline.metrics.get(name)), _number(current.metrics.get(name))
        direction = metric_direction(name)
        delta = improvement = None
        if base is not None and cur is not None:
            delta = cur - base
            improvement = delta if direction == "higher" else -delta
        regressed = improvement is not None and improvement < -(tolerance + EPSILON)
        improved = improvement is not None and improvement > tolerance + EPSILON
        deltas.append(
            MetricDelta(name, direction, base, cur, only_in, delta, improvement, regressed, improved)
        )
    return Comparison(True, None, tolerance, deltas)


def _fixed(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def render_comparison_markdown(
    comparison: Comparison, baseline_name: str = "baseline", tests: Mapping[str, Any] | None = None
) -> str:
    """A markdown table, worst improvement first (metrics without a delta last), with the verdict words;
    with ``tests`` (``eval.paired.paired_tests``), a second table of each metric's paired test."""
    if not comparison.comparable:
        return f"# Compare against {baseline_name}\n\n**NOT COMPARABLE**: {comparison.reason}\n"
    rows = sorted(
        comparison.deltas,
        key=lambda d: (d.improvement is None, d.improvement if d.improvement is not None else 0.0, d.name),
    )
    lines = [
        f"# Compare against {baseline_name}",
        "",
        f"Tolerance {comparison.tolerance} · {len(comparison.regressions)} regression(s)",
        "",
        "| metric | baseline | current | delta | verdict |",
        "|---|---:|---:|---:|---|",
    ]
    for d in rows:
        lines.append(
            f"| {d.name} | {_fixed(d.baseline)} | {_fixed(d.current)} | "
            f"{_fixed(d.delta, signed=True)} | {d.verdict} |"
        )
    if tests:
        lines += [
            "",
            "Paired over the questions both reports scored (is the move beyond question-sampling noise?):",
            "",
            "| metric | paired test | questions | current − baseline [95% CI] | p |",
            "|---|---|---:|---:|---:|",
        ]
        for d in rows:
            t = tests.get(d.name)
            if t is not None:
                lines.append(
                    f"| {d.name} | {t.method} | {t.n} | {t.statistic:+.4f} [{t.low:+.4f}, {t.high:+.4f}] "
                    f"| {t.p_value:.3g} |"
                )
    return "\n".join(lines) + "\n"
