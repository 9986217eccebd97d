"""Operating-curve plots of the gates: leak and recall against the floor, and the trade-off itself."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE as DEFAULT_FLOOR
from nomad_lab.gate.operating_curves import OperatingCurve

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def plot_floor_sweep(
    curves: Sequence[OperatingCurve],
    *,
    default_floor: float = DEFAULT_FLOOR,
    calibrated: float | None = None,
    margins: Sequence[float] | None = None,
    title: str = "",
) -> Figure:
    """Leak rate and recall@k against the setting, with 95% bands; the seed's default floor marked.

    A second axis shows the margin between each floor and the weakest correct top hit, the quantity
    behind the seed's decision to keep 0.62 rather than 0.65.
    """
    import matplotlib.pyplot as plt  # heavy; falls back to Agg by itself where there is no display

    fig, ax = plt.subplots(figsize=(8, 4.8))
    for curve in curves:
        line = ax.plot(curve.points, curve.leak, label=f"{curve.gate}: off-topic leak rate")[0]
        ax.fill_between(curve.points, curve.leak_lo, curve.leak_hi, color=line.get_color(), alpha=0.2)
        line = ax.plot(curve.points, curve.recall, "--", label=f"{curve.gate}: recall@{curve.k}")[0]
        ax.fill_between(curve.points, curve.recall_lo, curve.recall_hi, color=line.get_color(), alpha=0.2)
    ax.axvline(default_floor, color="grey", lw=1, ls=":", label=f"default floor {default_floor}")
    if calibrated is not None:
        ax.axvline(calibrated, color="black", lw=1, ls="-.", label=f"calibrated floor {calibrated:.2f}")
    if margins is not None and curves:
        twin = ax.twinx()
        twin.plot(curves[0].points, margins, color="tab:purple", lw=0.8, alpha=0.6)
        twin.axhline(0, color="tab:purple", lw=0.5, alpha=0.4)
        twin.set_ylabel("margin to weakest correct top hit", color="tab:purple")
    ax.set_xlabel("setting (floor on the post-rerank score)")
    ax.set_ylabel("rate")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


def plot_leak_vs_recall(curves: Sequence[OperatingCurve], *, title: str = "") -> Figure:
    """The trade-off itself: recall@k on x, leak rate on y, one curve per gate, with error bars."""
    import matplotlib.pyplot as plt  # heavy

    fig, ax = plt.subplots(figsize=(5.5, 4.8))
    for curve in curves:
        ax.errorbar(
            curve.recall,
            curve.leak,
            xerr=[curve.recall - curve.recall_lo, curve.recall_hi - curve.recall],
            yerr=[curve.leak - curve.leak_lo, curve.leak_hi - curve.leak],
            fmt="o-",
            ms=2,
            lw=0.8,
            elinewidth=0.4,
            alpha=0.8,
            label=curve.gate,
        )
    ax.set_xlabel("recall@k (answerable questions)")
    ax.set_ylabel("off-topic leak rate")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
