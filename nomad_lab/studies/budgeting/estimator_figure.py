"""The estimator's headline figure: held-out error per content class against each real tokenizer, with
the goals the estimator is held to drawn and named (at most 4% overall, at most 6% on every class).

Why its own module: the figure is read at the gallery's size, so it carries the goals as labelled lines,
clips the segmenter's 30-50% outliers (their values written on the clipped bars) so the goal lines are
not squashed against the axis, and shows the exact mode only where it was measured (a GGUF tokenizer):
a legend entry for bars of height zero would read as a missing series. The goals are named in the legend
above the panels (a note beside each line would sit on the bars).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt

from nomad_lab.studies.plots import headline_style, target_line

OVERALL_GOAL = 0.04
"""The estimator's goal over all samples of a tokenizer: mean absolute error at most 4%."""
CLASS_GOAL = 0.06
"""... and on every content class: at most 6%."""
BARS = ("segmenter", "content-aware+calibrated")
EXACT = "exact"
CLIP = 0.20
"""The top of each panel (20%): larger errors are clipped and written on their bar."""

Errors = Mapping[str, Mapping[str, Mapping[str, float]]]  # tokenizer -> class ("overall") -> method -> MAE


def plot_by_class(errors: Errors) -> Any:
    """One panel per tokenizer: a bar per class for the seed's segmenter and the content-aware estimator,
    a marker for the exact mode where measured, the 6% class goal over the classes and the 4% overall
    goal over the overall group."""
    tokenizers = list(errors)
    with headline_style():
        fig, axes = plt.subplots(len(tokenizers), 1, figsize=(9, 2.5 * len(tokenizers) + 1), squeeze=False)
        for ax, tokenizer in zip(axes[:, 0], tokenizers, strict=True):
            _panel(ax, tokenizer, errors[tokenizer])
        handles: dict[str, Any] = {}
        for ax in axes[:, 0]:
            for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
                handles.setdefault(label, handle)
        fig.legend(handles.values(), handles.keys(), loc="upper center", ncol=3, frameon=False)
        fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_figheight()))
    return fig


def _panel(ax: Any, tokenizer: str, table: Mapping[str, Mapping[str, float]]) -> None:
    classes = [c for c in table if c != "overall"] + (["overall"] if "overall" in table else [])
    width = 0.8 / len(BARS)
    for i, method in enumerate(BARS):
        values = [_value(table[c], method) for c in classes]
        xs = [x + (i - (len(BARS) - 1) / 2) * width for x in range(len(classes))]
        ax.bar(xs, [100 * min(v, CLIP) for v in values], width, label=method)
        for x, v in zip(xs, values, strict=True):
            if v > CLIP:
                ax.annotate(
                    f"{v:.0%}",
                    (x, 100 * CLIP),
                    ha="center",
                    va="top",
                    fontsize="x-small",
                    color="white",
                    xytext=(0, -2),
                    textcoords="offset points",
                )
    exact = [(x, _value(table[c], EXACT)) for x, c in enumerate(classes)]
    exact = [(x, v) for x, v in exact if not math.isnan(v)]
    if exact:
        ax.plot(
            [x for x, _ in exact],
            [100 * v for _, v in exact],
            "D",
            color="tab:green",
            ms=5,
            label="exact (the model's own tokenizer)",
        )
    ax.set_xlim(-0.5, len(classes) - 0.5)
    ax.set_ylim(-0.6, 100 * CLIP)  # room below 0 for the exact mode's markers
    share = 1 / len(classes)
    overall = "overall" in table
    target_line(
        ax,
        100 * CLASS_GOAL,
        f"goal: at most {CLASS_GOAL:.0%} per class",
        span=(0, 1 - share if overall else 1),
        note=False,
    )
    if overall:
        target_line(
            ax, 100 * OVERALL_GOAL, f"goal: {OVERALL_GOAL:.0%} overall", span=(1 - share, 1), note=False
        )
    ax.set_xticks(range(len(classes)), classes, rotation=15)
    ax.set_xlabel("content class")
    ax.set_ylabel("held-out MAE (%)")
    ax.set_title(tokenizer)


def _value(row: dict, method: str) -> float:
    """A stored error (stored results write a missing one as null), NaN when missing."""
    value = row.get(method)
    return math.nan if value is None else float(value)
