"""The gates headline figure: the floor and each gate family's best variant, leak against recall, with the
recall and leak targets drawn and named; every other variant folded into one grey entry.

Why not every curve: the leaderboard has a dozen rows, and a dozen coloured curves with error bars read
as one tangle at the gallery's size. A reader asks "does any family beat the floor at the targets?", so
each family is shown by the variant the leaderboard ranks best (lowest out-of-fold leak where recall
reaches its target) and the rest stay visible only as context. The interface is small on purpose: rows
with a ``family``, a ``name``, their operating curve and that one ranking figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nomad_lab.gate.operating_curves import OperatingCurve
from nomad_lab.studies.plots import headline_style, target_line

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FLOOR_FAMILY = "floor"


@dataclass(frozen=True)
class FamilyCurve:
    """One leaderboard row as the figure needs it. ``leak_at_target``: its out-of-fold leak where recall
    reaches the target (None or NaN: the target was not reached), the figure each family's best is
    picked by."""

    family: str
    name: str
    curve: OperatingCurve
    leak_at_target: float | None


def _rank(row: FamilyCurve) -> float:
    leak = row.leak_at_target
    return math.inf if leak is None or math.isnan(leak) else leak


def best_per_family(rows: Sequence[FamilyCurve]) -> list[FamilyCurve]:
    """Each family's best row (lowest leak at the target; ties: the first listed), the floor first, then
    the families from best to worst."""
    best: dict[str, FamilyCurve] = {}
    for row in rows:
        if row.family not in best or _rank(row) < _rank(best[row.family]):
            best[row.family] = row
    return sorted(best.values(), key=lambda r: (r.family != FLOOR_FAMILY, _rank(r)))


def _label(row: FamilyCurve) -> str:
    leak = _rank(row)
    there = f"leak {leak:.0%} at target" if math.isfinite(leak) else "recall target not reached"
    return f"{row.name} ({there})"


def plot_gate_families(
    rows: Sequence[FamilyCurve], *, recall_target: float, leak_target: float, title: str = ""
) -> Figure:
    """Leak against recall@k: the floor (black) and each family's best with its 95% leak band and its
    out-of-fold point at the recall target; the other rows thin and grey under one legend entry."""
    import matplotlib.pyplot as plt  # heavy

    shown = best_per_family(rows)
    folded = [r for r in rows if not any(r is s for s in shown)]  # by identity: curves hold arrays
    k = shown[0].curve.k if shown else 5
    with headline_style():
        fig, ax = plt.subplots(figsize=(7, 5))
        for i, row in enumerate(folded):
            c = row.curve
            ax.plot(
                c.recall,
                c.leak,
                color="0.7",
                lw=0.8,
                zorder=0,
                label=f"{len(folded)} other variants" if i == 0 else "_nolegend_",
            )
        colours = iter(plt.get_cmap("tab10").colors)
        for row in shown:
            c = row.curve
            order = np.argsort(c.recall, kind="stable")
            colour = "black" if row.family == FLOOR_FAMILY else next(colours)
            width = 2.2 if row.family == FLOOR_FAMILY else 1.6
            ax.plot(c.recall[order], c.leak[order], color=colour, lw=width, label=_label(row))
            ax.fill_between(
                c.recall[order], c.leak_lo[order], c.leak_hi[order], color=colour, alpha=0.12, lw=0
            )
            if math.isfinite(_rank(row)):
                ax.plot(
                    [recall_target], [_rank(row)], "o", color=colour, ms=6, mec="white", label="_nolegend_"
                )
        target_line(ax, recall_target, f"recall@{k} target {recall_target:.2f}", axis="x")
        target_line(ax, leak_target, f"leak target {leak_target:.0%}")
        ax.set_xlabel(f"recall@{k} (answerable questions)")
        ax.set_ylabel("off-topic leak rate")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, max([0.1, *(float(np.nanmax(r.curve.leak_hi)) for r in shown)]) * 1.05)
        ax.set_title(title)
        ax.legend(loc="upper left", framealpha=0.9)
        fig.tight_layout()
    return fig
