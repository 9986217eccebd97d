"""A blind rating of drafts counted: per source and per kind, the share rated usable as written, needing
an edit, and broken, each with a 95% Wilson interval.

Why per source and kind, never blended: the question is whether the model's drafts are kept more often
than the templates' (issue 43: templates 11-33% usable as written), and answerable and refusal drafts
are written and judged differently, so a blend would let one kind hide the other. Why Wilson: with tens
of drafts per group a share is near 0 or 1 often, where a normal interval leaves [0, 1].

Reads two files the rating made (:mod:`nomad_lab.data.draft_sheet`): the verdicts (who rated, the rubric
as they applied it, one verdict per sheet row) and the key (row -> source and kind), kept apart until
here. Every row of the key must have exactly one verdict from :data:`VERDICTS`, and no verdict may name
a row the key lacks: a rating with a gap is refused, naming the row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.eval.retrieval_metrics import wilson_interval

__all__ = ["VERDICTS", "rating_rates"]

VERDICTS = ("usable", "edit", "broken")
"""Usable as written, needs an edit, broken: the rubric's three levels (the verdicts file defines them)."""


def _read(path: Path, *fields: str) -> dict[str, Any]:
    """A rating file's JSON object, refused in one line naming the file when it is missing, not JSON or
    lacks one of ``fields``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise NomadLabError(f"{path}: cannot read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise NomadLabError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise NomadLabError(f"{path}: expected a JSON object, got {type(data).__name__}")
    if absent := [f for f in fields if f not in data]:
        raise NomadLabError(f"{path}: missing field(s) {', '.join(absent)}")
    return data


def rating_rates(verdicts_path: Path, key_path: Path) -> dict[str, Any]:
    """``{who, rubric, library, bySource: {source: {kind: {n, usable, edit, broken}}}}``, each level
    ``{count, share, low, high}`` (the share with its 95% Wilson interval)."""
    stored, key = _read(verdicts_path, "who", "rubric", "library", "verdicts"), _read(key_path)
    verdicts: dict[str, Any] = stored["verdicts"]
    missing = sorted(set(key) - set(verdicts))
    extra = sorted(set(verdicts) - set(key))
    if missing or extra:
        raise NomadLabError(
            f"{verdicts_path}: rows without a verdict: {', '.join(missing) or 'none'}; "
            f"verdicts for rows the key {key_path} lacks: {', '.join(extra) or 'none'}"
        )
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for row, entry in sorted(key.items()):
        verdict = verdicts[row].get("verdict") if isinstance(verdicts[row], dict) else None
        if verdict not in VERDICTS:
            raise NomadLabError(f"{verdicts_path}: {row}: verdict {verdict!r} (one of {', '.join(VERDICTS)})")
        group = counts.setdefault(entry["source"], {}).setdefault(entry["kind"], dict.fromkeys(VERDICTS, 0))
        group[verdict] += 1
    by_source: dict[str, dict[str, Any]] = {}
    for source, kinds in sorted(counts.items()):
        for kind, tally in sorted(kinds.items()):
            n = sum(tally.values())
            levels = {}
            for level, count in tally.items():
                interval = wilson_interval(count, n)
                assert interval is not None  # n >= 1: the group has this row
                levels[level] = {
                    "count": count,
                    "share": count / n,
                    "low": interval.low,
                    "high": interval.high,
                }
            by_source.setdefault(source, {})[kind] = {"n": n, **levels}
    return {
        "who": stored["who"],
        "rubric": stored["rubric"],
        "library": stored["library"],
        "bySource": by_source,
    }
