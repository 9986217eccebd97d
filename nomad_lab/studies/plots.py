"""Saving publication figures (matplotlib, headless-safe): every plot as PNG and SVG; and what a headline
figure must carry to be read at the gallery's size.

Why the checks live here: a figure that reaches ``results/`` is read by a reviewer at thumbnail size
first, so a headline figure is drawn in :func:`headline_style` (text that stays legible when the page
shrinks it) and its goals are drawn with :func:`target_line` (a labelled line a test can find);
:func:`figure_problems` lists what a reader would miss (an unlabelled axis, no legend, a legend entry
with nothing drawn), inspected on the Figure object rather than on pixels.
"""

from __future__ import annotations

import io
import math
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt  # falls back to Agg by itself where there is no display

TARGET = "target"
"""The ``gid`` of a line that marks a goal or target (found again by :func:`target_labels`)."""

HEADLINE_RC = {
    "font.size": 11,
    "axes.titlesize": 11,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 9.5,
    "figure.titlesize": 12,
}
"""Text sizes of a headline figure: about 11 px on screen when the gallery shows it half-page wide."""


def save(fig: plt.Figure, path: str | Path) -> Path:
    """Write ``fig`` as PNG (150 dpi, for reading) and as SVG beside it (for publishing), then close it.

    The saved box is the figure's drawn extent (``bbox_inches="tight"``), so a legend placed outside the
    axes, as the gates figure's is, is kept rather than cut at the figure's edge."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150, bbox_inches="tight")
    fig.savefig(path.with_suffix(".svg"), bbox_inches="tight")
    plt.close(fig)
    return path


def png_bytes(fig: plt.Figure) -> bytes:
    """``fig`` as PNG bytes in memory (a widget shows them; no file), then closed: the live figure of a
    notebook goes through here as a published one goes through :func:`save`."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def headline_style() -> AbstractContextManager[Any]:
    """Draw inside this to get :data:`HEADLINE_RC` (text sizes are fixed when an artist is created)."""
    return plt.rc_context(HEADLINE_RC)


def target_line(
    ax: Any,
    value: float,
    label: str,
    *,
    axis: str = "y",
    span: tuple[float, float] = (0, 1),
    note: bool = True,
) -> Any:
    """A goal drawn as a dashed line at ``value`` (``axis="y"``: horizontal) over ``span`` (axes
    fraction), above the data, named in the legend and (``note``) written beside the line, so it reads
    without the legend too."""
    style = {"color": "0.2", "lw": 1.3, "ls": (0, (3, 2)), "label": label, "gid": TARGET, "zorder": 3}
    if axis == "y":
        line = ax.axhline(value, *span, **style)
        where = {"xy": (span[1], value), "xycoords": ("axes fraction", "data"), "ha": "right", "va": "bottom"}
    else:
        line = ax.axvline(value, *span, **style)
        where = {"xy": (value, span[0]), "xycoords": ("data", "axes fraction"), "ha": "right", "va": "bottom"}
    if note:
        ax.annotate(
            label,
            **where,
            rotation=0 if axis == "y" else 90,
            fontsize="small",
            color="0.2",
            xytext=(-3, 2) if axis == "y" else (-3, 3),
            textcoords="offset points",
        )
    return line


def target_labels(fig: plt.Figure) -> list[str]:
    """The labels of every target line in ``fig``, in drawing order."""
    return [str(line.get_label()) for ax in fig.axes for line in ax.get_lines() if line.get_gid() == TARGET]


def _drawn(artist: Any) -> bool:
    """Whether a legend entry's artist shows anything: a line with a finite point, a bar of non-zero
    finite height, a filled band with a path, any other patch."""
    if hasattr(artist, "get_xydata"):
        return any(all(math.isfinite(v) for v in point) for point in artist.get_xydata())
    if hasattr(artist, "patches"):  # a bar container
        return any(math.isfinite(p.get_height()) and p.get_height() != 0 for p in artist.patches)
    if hasattr(artist, "get_paths"):
        return len(artist.get_paths()) > 0
    if hasattr(artist, "lines"):  # an errorbar container
        return _drawn(artist.lines[0])
    return True


def figure_problems(fig: plt.Figure) -> list[str]:
    """What a reader would miss in ``fig``: axes with data but no axis label (a twin axis needs only
    its own y label), no legend anywhere, a legend entry with no text or with nothing drawn."""
    problems = []
    positions = {}
    for ax in fig.axes:
        if not (ax.lines or ax.patches or ax.collections or ax.containers):
            continue
        name = ax.get_title() or f"axes {fig.axes.index(ax)}"
        if not ax.get_ylabel():
            problems.append(f"{name}: no y label")
        key = tuple(round(v, 3) for v in ax.get_position().bounds)
        positions.setdefault(key, []).append(ax)
    for group in positions.values():
        if not any(ax.get_xlabel() for ax in group):
            problems.append(f"{group[0].get_title() or 'axes'}: no x label")
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    if not legends:
        problems.append("no legend")
    for ax in fig.axes:
        for artist, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if not label.strip():
                problems.append(f"{ax.get_title() or 'axes'}: a legend entry with no text")
            elif not _drawn(artist):
                problems.append(f"{ax.get_title() or 'axes'}: legend entry {label!r} draws nothing")
    return problems
