"""A labelling sitting read back: how the intervals narrowed as labels came in, what the sitting cost, and
how many drafts a labeller kept as written.

Why: a person deciding whether more labels are worth it needs to see how fast the intervals shrink, for
each of the two questions a gate answers (the off-topic leak, and the pass rate of refusals whose context
is on topic: unanswerable and near-domain), not for their blend. :func:`narrowing` replays the decisions
log at every ``step`` decisions (skips count, as they cost the labeller time) through
:meth:`~nomad_lab.eval.gating.label_sitting.LabelSession.figures`. :func:`sitting_times` reads the sitting's
own logs (the drafting time from ``/usr/bin/time``, the agent's batches from ``scripts/label_walk.py``)
and :func:`draft_share` a labeller's verdicts on sampled drafts before and after the drafter's checks.
``nomad-lab study labelling`` publishes all three (``nomad_lab.studies.gating.labelling``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.eval.gating.label_sitting import LabelSession

__all__ = ["draft_share", "narrowing", "sitting_times"]


def narrowing(session: LabelSession, step: int) -> list[dict[str, Any]]:
    """The session's figures after the first ``step``, ``2 * step``, ... decisions and after all of them."""
    total = len(session.decisions())
    if total == 0:
        raise NomadLabError(f"{session.labels.log}: no decisions to replay")
    return [{"decisions": n, **session.figures(first=n)} for n in [*range(step, total, step), total]]


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise NomadLabError(f"{path}:{number}: not JSON ({exc.msg})") from None
    return out


def sitting_times(log: Path, draft_time: Path) -> dict[str, Any]:
    """The sitting's timings as logged: drafting (``draft_time``, written by ``/usr/bin/time -f "%e s
    wall"``) and the labeller's batches (``log``: one ``{"labels": N, "seconds": S}`` line per batch)."""
    batches = _lines(log)
    for number, batch in enumerate(batches, 1):
        if not {"labels", "seconds"} <= batch.keys():
            raise NomadLabError(f"{log}:{number}: a batch needs labels and seconds, got {sorted(batch)}")
    decisions, seconds = sum(b["labels"] for b in batches), sum(b["seconds"] for b in batches)
    if decisions == 0:
        raise NomadLabError(f"{log}: no labelled batch")
    try:
        draft_seconds = float(draft_time.read_text(encoding="utf-8").split()[0])
    except (IndexError, ValueError):
        raise NomadLabError(f"{draft_time}:1: expected '<seconds> s wall ...' from /usr/bin/time") from None
    return {
        "draftSeconds": draft_seconds,
        "batches": len(batches),
        "decisions": decisions,
        "labelSeconds": round(seconds, 1),
        "secondsPerDecision": round(seconds / decisions, 2),
    }


def draft_share(verdicts: Path) -> dict[str, Any]:
    """The share of sampled drafts kept as written, before and after the drafter's checks, and their
    ratio: a draft a person must rewrite or skip costs a decision and gives nothing (the verdicts file
    says who judged)."""
    stored = json.loads(verdicts.read_text(encoding="utf-8"))
    shares = {}
    for side in ("before", "after"):
        drafts = stored[side]["drafts"]
        if not drafts:
            raise NomadLabError(f"{verdicts}: {side}.drafts is empty")
        kept = sum(bool(d["kept"]) for d in drafts)
        shares[side] = {"n": len(drafts), "kept": kept, "keptShare": kept / len(drafts)}
    summary: dict[str, Any] = {"who": stored["who"], "library": stored["library"], **shares}
    before = shares["before"]["keptShare"]
    summary["ratio"] = shares["after"]["keptShare"] / before if before else None
    return summary
