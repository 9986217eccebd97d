"""The generation eval's output: one mode's result, the printed summary, the decomposition and the
markdown report.

Why apart from the run loop (``eval.generation``): formatting changes often and never touches how
answers are computed or stored; this module reads a :class:`ModeResult` or a stored ``EvalReport`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from nomad_lab.core.generation_metrics import GenerationAggregate, GenerationCase
from nomad_lab.eval.generation_answers import GENERATION_MODES
from nomad_lab.eval.reports import EvalReport
from nomad_lab.eval.token_errors import mean_token_errors, summary_line

__all__ = [
    "ModeResult",
    "decomposition",
    "format_failures",
    "format_mode_summary",
    "render_generation_markdown",
]


@dataclass
class ModeResult:
    mode: str
    cases: list[GenerationCase]
    aggregate: GenerationAggregate
    by_tag: dict[str, GenerationAggregate]
    report: EvalReport
    run_id: str
    computed: int
    cached: int
    elapsed_s: float
    report_paths: tuple[Path, Path] | None = None

    @property
    def unstable_ids(self) -> list[str]:
        return [c.id for c in self.cases if c.correctness.unstable]


def _fmt(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:.3f}"


def format_mode_summary(mode: ModeResult) -> str:
    """The reference's per-mode block, plus where the answers came from and which cases flipped."""
    agg = mode.aggregate
    lines = [
        f"=== {mode.mode.upper()} ({mode.elapsed_s:.1f}s) ===",
        f"  correctness        {_fmt(agg.correctness)}",
        f"  refusal correct    {_fmt(agg.refusal_correctness)}",
        f"  leakage rate       {_fmt(agg.leakage_rate)}  (lower is better)",
        f"  think-tag leak     {_fmt(agg.think_tag_leak_rate)}  (should be 0)",
        f"  markdown formatted {_fmt(agg.markdown_rate)}",
        "  numeric grounding  "
        + (f"{agg.groundedness['mean']:.3f} (n={agg.groundedness['n']})" if agg.groundedness else "  n/a"),
        "  mean answer length "
        + ("n/a" if agg.mean_answer_length is None else f"{round(agg.mean_answer_length)} chars"),
    ]
    if agg.mean_prompt_tokens is not None:
        lines.append(f"  mean prompt tokens {round(agg.mean_prompt_tokens)}")
    if agg.history_elided_rate is not None:
        lines.append(f"  history elided     {_fmt(agg.history_elided_rate)}  (share of cases needing a trim)")
    if agg.chunks_dropped_rate is not None:
        lines.append(
            f"  context dropped    {_fmt(agg.chunks_dropped_rate)}  (share of cases where a chunk didn't fit)"
        )
    if agg.prompt_token_error:
        lines.append(
            f"  token estimate err {agg.prompt_token_error['mean'] * 100:.1f}%  (vs the backend's real count)"
        )
    if line := summary_line(mean_token_errors(c.extra.get("promptTokenErrors") or {} for c in mode.cases)):
        lines.append(line)
    if agg.unstable:
        lines.append(
            f"  WARNING {agg.unstable} question(s) flipped between repeats — excluded from gating, do not "
            f"read them as a regression: {', '.join(mode.unstable_ids)}"
        )
    if agg.errors:
        first = next(c for c in mode.cases if c.error)
        lines.append(f"  ERROR {agg.errors} question(s) errored: the scores above are incomplete.")
        lines.append(f"    first error ({first.id}): {first.error}")
    lines.append(f"  answers: {mode.computed} computed, {mode.cached} from the store · run {mode.run_id}")
    if mode.report_paths:
        lines.append(f"  report: {mode.report_paths[0]}")
    return "\n".join(lines)


def decomposition(correctness: Mapping[str, float | None]) -> list[str]:
    """The attribution of ``--all-modes`` and the reference's triage verdicts."""
    oracle, e2e, none = (correctness.get(m) for m in GENERATION_MODES)
    lines = ["=== Decomposition ==="]
    if oracle is not None and e2e is not None:
        lines.append(f"  retrieval cost   {oracle - e2e:.3f}   (oracle {oracle:.3f} - e2e {e2e:.3f})")
        lines.append(f"  model ceiling    {oracle:.3f}   (what this model manages with perfect context)")
    if e2e is not None and none is not None:
        lines.append(f"  RAG contribution {e2e - none:.3f}   (e2e {e2e:.3f} - noretrieval {none:.3f})")
    if oracle is not None and e2e is not None:
        if oracle < 0.6:
            lines.append(
                "  VERDICT model struggles: oracle is low even with perfect context. Retrieval work will "
                "not fix it — try a larger model."
            )
        elif oracle - e2e > 0.15:
            lines.append(
                "  VERDICT work on retrieval: the model can use good context but is not being given it."
            )
        else:
            lines.append("  VERDICT OK: model and retrieval are both holding up on this corpus.")
    if none is not None and e2e is not None and e2e <= none:
        lines.append(
            "  WARNING RAG is not adding anything over the bare model on this set — check that retrieval "
            "is actually reaching the prompt."
        )
    return lines


def format_failures(mode: ModeResult) -> list[str]:
    """``--verbose``: every case that missed, with what it missed and what it said."""
    lines = []
    for case in mode.cases:
        if case.correctness.pass_rate >= 1 and case.refusal_correctness.pass_rate >= 1:
            continue
        c, r = case.correctness, case.refusal_correctness
        lines.append(f"  {case.id}  correct={c.passes}/{c.repeats} refusal={r.passes}/{r.repeats}")
        if case.scores and case.scores[0].missed_required:
            lines.append(f"    missed: {' | '.join(case.scores[0].missed_required)}")
        if case.scores and case.scores[0].hit_forbidden:
            lines.append(f"    said forbidden: {' | '.join(case.scores[0].hit_forbidden)}")
        if case.answers:
            said = " ".join(case.answers[0].split())
            lines.append(f"    said: {said[:220]}{'…' if len(said) > 220 else ''}")
    return ["--- failures ---", *lines] if lines else []


def render_generation_markdown(report: EvalReport) -> str:
    """The markdown report: parameters, metrics, per-tag correctness, unstable and errored cases."""
    meta, params = report.meta, report.meta["params"]
    lines = [
        f"# Generation eval · {params['mode']} · {params['model']} · {params['suite']}",
        "",
        f"- created: {meta['createdAt']} · run `{meta.get('runId')}`",
        f"- corpus fingerprint: `{meta['corpusFingerprint']}`",
        f"- git: `{meta.get('gitSha')}` ({meta.get('gitBranch')}{', dirty' if meta.get('gitDirty') else ''})",
        f"- repeats {params['repeats']} · seed {params['seed']} · style {params['style'] or 'deterministic'}"
        f" · floor {params['minFinalScore']} · relevance check off · placement {params['ragPlacement']}",
        f"- window: {params['contextWindow'] or 'resolved per model'}"
        f" (long-context goldens: {params['contextWindow'] or params['longContextWindow']})",
        f"- answers: {report.extra['answers']['computed']} computed, {report.extra['answers']['fromStore']}"
        " from the store",
        "",
        "## Metrics",
        "",
        "| metric | value |",
        "|---|---:|",
        *(f"| {name} | {'—' if v is None else f'{v:.4f}'} |" for name, v in report.metrics.items()),
        "",
        "## By tag",
        "",
        "| tag | correctness | refusalCorrectness | leakageRate | historyElidedRate |",
        "|---|---:|---:|---:|---:|",
    ]
    for tag, m in report.by_tag.items():
        cells = (m.get(k) for k in ("correctness", "refusalCorrectness", "leakageRate", "historyElidedRate"))
        lines.append(f"| {tag} | " + " | ".join("—" if v is None else f"{v:.3f}" for v in cells) + " |")
    unstable = report.extra.get("unstableCases") or []
    errored = [c for c in report.cases if c.get("error")]
    lines += ["", f"## Unstable cases ({len(unstable)})", "", *(f"- {i}" for i in unstable)]
    lines += ["", f"## Errors ({len(errored)})", "", *(f"- {c['id']}: {c['error']}" for c in errored)]
    return "\n".join(lines) + "\n"
