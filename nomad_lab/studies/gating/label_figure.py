"""The labelling sitting's live figure and its caption: the off-topic leak at recall@5 >= 0.90 (the
headline) after each decision, for the floor and the learned gate, and the per-kind figures in words.

Why these choices: a blend of every refusal answers no single question (the off-topic leak and the
unanswerable pass rate differ by tens of points), so the curve is the off-topic leak and the caption
splits the rest by kind; an interval over two or three labels of a kind is noise, so one is drawn (and
written) only from :data:`FIGURE_NEEDS` labels of that kind, a bare count ``k/n`` below it; decisions are
whole numbers, so the x ticks are; and the floor is drawn above the learned gate, so where the two agree
the floor's line stays visible. The history is replayed from the decisions log (:func:`replay`), so a
rerun of the notebook shows the same curve.
"""

from __future__ import annotations

from typing import Any

from nomad_lab.data.refusal_kinds import OFF_TOPIC, kind_label
from nomad_lab.eval.gating.label_sitting import MIN_PER_CLASS, LabelSession

REPLAY_POINTS = 40
"""At most this many points of the figure's history are replayed from the log when the widget opens."""
FIGURE_NEEDS = MIN_PER_CLASS
"""Answerable and refusal labels each before the leak figure is drawn: below it an interval is noise."""
GATES = (
    ("floor", "floor (in sample)", "tab:blue", "-", "o", 3),
    ("gate", "learned gate (out of fold)", "tab:orange", "--", "s", 2),
)
"""Each curve of the figure: its figures' key, name, colour, line, marker and layer (the floor on top,
so the learned gate's line never hides it where the two agree)."""


def draw_history(history: list[tuple[int, dict[str, Any]]]) -> Any:
    """The figure (matplotlib): the off-topic leak at recall@5 >= 0.90 (the headline) after each
    decision, per gate, its 95% interval drawn only where :data:`FIGURE_NEEDS` off-topic labels back it;
    integer decision ticks, percent leak ticks."""
    import matplotlib  # heavy

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # heavy
    from matplotlib.ticker import MaxNLocator, PercentFormatter  # heavy

    figure, axes = plt.subplots(figsize=(6.0, 2.8), dpi=100)
    for name, what, colour, line, marker, layer in GATES:
        points = [(n, off) for n, f in history if _enough(f) and (off := _off_topic(f.get(name)))]
        if not points:
            continue
        x = [n for n, _ in points]
        axes.plot(
            x, [p["pass"][0] for _, p in points], line, marker=marker, color=colour, zorder=layer, label=what
        )
        banded = [(n, p) for n, p in points if p["n"] >= FIGURE_NEEDS]
        if banded:
            axes.fill_between(
                [n for n, _ in banded],
                [p["pass"][1] for _, p in banded],
                [p["pass"][2] for _, p in banded],
                color=colour,
                alpha=0.15,
                zorder=layer - 1,
            )
    axes.set_xlabel("decisions so far")
    axes.set_ylabel("off-topic leak at\nrecall@5 >= 0.90")
    axes.set_ylim(-0.02, 1.02)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    if axes.lines:
        axes.legend(loc="upper right", fontsize=8)
    else:
        enough = any(_enough(f) for _, f in history)
        wait = "no off-topic refusal labelled yet" if enough else f"needs at least {FIGURE_NEEDS} of each"
        axes.text(0.5, 0.5, wait, ha="center", transform=axes.transAxes)
    figure.tight_layout()
    return figure


def plot_history(history: list[tuple[int, dict[str, Any]]]) -> bytes:
    """:func:`draw_history` as the PNG the widget shows (bytes in memory, no file)."""
    from nomad_lab.studies.plots import png_bytes  # heavy: matplotlib, only once the widget draws

    return png_bytes(draw_history(history))


def _off_topic(gate: dict[str, Any] | None) -> dict[str, Any] | None:
    """A gate's off-topic figures (``n``, ``pass``), or None when it has none yet."""
    return (gate or {}).get("byKind", {}).get(OFF_TOPIC)


def _enough(figures: dict[str, Any]) -> bool:
    return min(figures["answerable"], figures["refusals"]) >= FIGURE_NEEDS


def figures_line(figures: dict[str, Any]) -> str:
    """The figure's caption, two lines: what the labels are (per refusal kind), then each gate's figures
    at recall@5 >= 0.90 per kind (the off-topic leak first), an interval only from :data:`FIGURE_NEEDS`
    labels of a kind and the bare count below it; or what the figure still needs."""
    answerable, by_kind = figures["answerable"], figures.get("refusalsByKind", {})
    kinds = ", ".join(f"{n} {kind}" for kind, n in by_kind.items())
    first = f"{answerable} answerable and {figures['refusals']} refusals labelled ({kinds})"
    if not _enough(figures):
        return (
            f"{first}.\nThe figure needs at least {FIGURE_NEEDS} answerable and {FIGURE_NEEDS} refusals "
            "(leak: the share of labelled refusals still given context when recall@5 >= 0.90)."
        )
    parts = []
    for name, what, *_ in GATES:
        f = figures.get(name)
        if f:
            split = [f"{_kind_name(kind)} {_rate(v)}" for kind, v in f.get("byKind", {}).items()]
            parts.append(f"{what}: " + ", ".join(split))
        elif name == "floor":
            parts.append("floor: no threshold reaches recall@5 0.90 on these labels")
    return f"{first}.\nAt recall@5 >= 0.90: " + "; ".join(parts)


def _kind_name(kind: str) -> str:
    return kind_label(kind)


def _rate(figures: dict[str, Any]) -> str:
    """``k/n`` passed, with the rate and its interval once ``n`` reaches :data:`FIGURE_NEEDS`."""
    n, (mean, low, high) = figures["n"], figures["pass"]
    passed = f"{round(mean * n)}/{n}"
    return f"{mean:.0%} [{low:.0%}, {high:.0%}] ({passed})" if n >= FIGURE_NEEDS else passed


def replay(session: LabelSession, points: int = REPLAY_POINTS) -> list[tuple[int, dict[str, Any]]]:
    """The figure's history from the decisions log: the figures after the first k decisions, for up to
    ``points`` values of k ending at every decision so far."""
    total = len(session.decisions())
    if total == 0:
        return []
    step = max(1, -(-total // points))
    marks = sorted({*range(step, total + 1, step), total})
    return [(k, session.figures(first=k)) for k in marks]
