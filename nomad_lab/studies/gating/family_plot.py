"""The gates headline figure: one panel per question a gate answers, each row drawn where it actually is.

Why panels and points: an off-topic question and an on-topic question the library cannot answer are
different questions (:mod:`nomad_lab.data.refusal_kinds`); one "leak" axis over both blends them, so each
refusal kind gets its own panel (off-topic leak, the reference's question, first). And a curve swept in
sample, or a point drawn at the nominal recall target, flatters a row whose threshold, chosen on training
folds, keeps less recall out of fold; so each row is one point at the out-of-fold recall@5 it actually
reaches and its out-of-fold pass rate there, with both 95% intervals. Each family's best row (on the
headline panel) is coloured and named; the other rows stay grey under one legend entry, and the legend
sits outside the axes so it never hides a point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt

from nomad_lab.data.refusal_kinds import KINDS
from nomad_lab.studies.plots import headline_style, target_line

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FLOOR_FAMILY = "floor"
QUESTIONS = {name: kind.question for name, kind in KINDS.items()}
"""Each panel's title: the question its refusal kind asks of a gate (from the kind's record)."""
Triple = tuple[float, float, float]


@dataclass(frozen=True)
class RowPoint:
    """One leaderboard row as the figure needs it: its out-of-fold recall@5 at its recall point and, per
    refusal kind, its pass rate there (each a mean with a 95% interval; None: not measured)."""

    family: str
    name: str
    recall: Triple
    by_kind: dict[str, Triple | None]


def _rank(row: RowPoint, kind: str, recall_target: float) -> tuple[bool, float]:
    """Rows that reach the recall target out of fold first, then the lowest pass rate."""
    value = row.by_kind.get(kind)
    rate = math.inf if value is None or math.isnan(value[0]) else value[0]
    return row.recall[0] < recall_target - 1e-9, rate


def best_per_family(rows: Sequence[RowPoint], kind: str, recall_target: float = 0.0) -> list[RowPoint]:
    """Each family's best row on ``kind`` (among those reaching ``recall_target`` out of fold, if any: the
    lowest pass rate; ties: the first listed), the floor first, then the families from best to worst."""
    best: dict[str, RowPoint] = {}
    for row in rows:
        if row.family not in best or _rank(row, kind, recall_target) < _rank(
            best[row.family], kind, recall_target
        ):
            best[row.family] = row
    return sorted(best.values(), key=lambda r: (r.family != FLOOR_FAMILY, _rank(r, kind, recall_target)))


def plot_by_kind(
    rows: Sequence[RowPoint],
    kinds: Sequence[tuple[str, str, int]],
    *,
    recall_target: float,
    leak_target: float,
    title: str = "",
) -> Figure:
    """One panel per ``(kind, axis label such as "leak" or "pass rate", n)``; the first kind picks each
    family's best row and carries the leak target line. Points at their out-of-fold recall, with both
    intervals as error bars."""
    headline = kinds[0][0]
    shown = best_per_family(rows, headline, recall_target)
    colours = iter(plt.get_cmap("tab10").colors)
    colour = {id(r): ("black" if r.family == FLOOR_FAMILY else next(colours)) for r in shown}
    with headline_style():
        fig, axes = plt.subplots(1, len(kinds), figsize=(4.2 * len(kinds) + 3.2, 4.4), squeeze=False)
        for panel, (ax, (kind, label, n)) in enumerate(zip(axes[0], kinds, strict=True)):
            grey = True
            for row in rows:
                value = row.by_kind.get(kind)
                if value is None:
                    continue
                picked = id(row) in colour
                legend = row.name if picked and panel == 0 else "_nolegend_"
                if not picked and grey and panel == 0:
                    legend, grey = f"{len(rows) - len(shown)} other rows", False
                ax.errorbar(
                    row.recall[0],
                    value[0],
                    xerr=[[row.recall[0] - row.recall[1]], [row.recall[2] - row.recall[0]]],
                    yerr=[[value[0] - value[1]], [value[2] - value[0]]],
                    fmt="o",
                    ms=6 if picked else 3,
                    color=colour.get(id(row), "0.7"),
                    elinewidth=1.2 if picked else 0.6,
                    zorder=2 if picked else 1,
                    label=legend,
                )
            target_line(ax, recall_target, f"recall@5 target {recall_target:.2f}", axis="x")
            if panel == 0:
                target_line(ax, leak_target, f"leak target {leak_target:.0%}")
            ax.set_xlabel("out-of-fold recall@5 reached (answerable questions)")
            ax.set_ylabel(f"{kind} {label} (n = {n})")
            ax.set_ylim(0, 1)
            ax.set_title(QUESTIONS.get(kind, kind))
        handles, labels = axes[0][0].get_legend_handles_labels()
        rank = {r.name: i for i, r in enumerate(shown)}  # the floor, then the families best first
        order = sorted(range(len(labels)), key=lambda i: rank.get(labels[i], len(rank)))
        fig.legend(
            [handles[i] for i in order],
            [labels[i] for i in order],
            loc="center left",
            bbox_to_anchor=(1.0, 0.5),
            frameon=False,
        )
        if title:
            fig.suptitle(title)
        fig.tight_layout()
    return fig
