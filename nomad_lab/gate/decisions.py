"""Every gate row's per-question decisions as a result file, so any split of a result is recomputable.

Why a file of decisions and not only rates: a leaderboard that stores one blended leak per row (or the
best row's per-tag counts) cannot be re-split when a reader asks another question of it: by refusal
kind, by suite, by a tag added later. One line per (row, repeat, question) with its held-out fold, the
score the gate gave it and whether its context reached the prompt at the row's recall point is enough to
recompute every rate on the page, and :func:`pass_rates` does so (a test holds the page to it).

Format: gzip CSV, columns :data:`COLUMNS`; ``fold`` -1 marks a fixed point scored on every question,
``score`` is empty where the gate has no per-question score (a judge's bare verdict).
"""

from __future__ import annotations

import csv
import gzip
import io
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nomad_lab.core.errors import NomadLabError

COLUMNS = ("row", "repeat", "fold", "question", "kind", "score", "kept")


@dataclass(frozen=True)
class Decision:
    row: str
    repeat: int
    fold: int
    question: str
    kind: str  # the refusal kind, "" for an answerable question
    score: float
    kept: bool


def row_decisions(
    name: str, extra: dict, ids: Sequence[str], kinds: Sequence[str]
) -> Iterator[tuple[object, ...]]:
    """The CSV rows of one gate row from its figures' ``extra`` (``passed``, ``fold``, ``score``)."""
    passed, folds = extra["passed"], extra["fold"]
    score = extra.get("score")
    for r in range(passed.shape[0]):
        for i, question in enumerate(ids):
            value = "" if score is None or not math.isfinite(score[r, i]) else f"{score[r, i]:.6g}"
            yield name, r, int(folds[r, i]), question, kinds[i], value, int(passed[r, i])


def write_decisions(path: str | Path, rows: Iterable[tuple[object, ...]]) -> Path:
    """Write decision rows (as :func:`row_decisions` yields them) to a gzip CSV; returns the path.

    ``mtime=0`` keeps the file byte-identical for identical decisions, so a rerun that changes nothing
    changes no tracked file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with (
        open(target, "wb") as raw,
        gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz,
        io.TextIOWrapper(gz, encoding="utf-8", newline="") as text,
    ):
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    return target


def read_decisions(path: str | Path) -> list[Decision]:
    """Read a decisions file; a malformed line is refused naming ``file:line`` and the field."""
    out = []
    with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or tuple(header) != COLUMNS:
            raise NomadLabError(f"{path}:1: expected the header {','.join(COLUMNS)}, got {header!r}")
        for line, fields in enumerate(reader, start=2):
            if len(fields) != len(COLUMNS):
                raise NomadLabError(f"{path}:{line}: expected {len(COLUMNS)} fields, got {len(fields)}")
            name, repeat, fold, question, kind, score, kept = fields
            try:
                out.append(
                    Decision(
                        name,
                        int(repeat),
                        int(fold),
                        question,
                        kind,
                        float(score) if score else math.nan,
                        kept == "1",
                    )
                )
            except ValueError as exc:
                raise NomadLabError(f"{path}:{line}: {exc}") from None
    return out


def pass_rates(decisions: Iterable[Decision], row: str) -> dict[str, float]:
    """A row's pass rate per question kind ("" = answerable questions kept), from its decisions: the
    mean over repeats of each repeat's share passed, as the leaderboard computes it."""
    by_kind: dict[str, dict[int, list[bool]]] = {}
    for d in decisions:
        if d.row == row:
            by_kind.setdefault(d.kind, {}).setdefault(d.repeat, []).append(d.kept)
    if not by_kind:
        raise NomadLabError(f"no decisions of row {row!r}")
    return {
        kind: float(np.mean([np.mean(kept) for kept in repeats.values()]))
        for kind, repeats in by_kind.items()
    }
