"""Every headline figure of the gallery, inspected as a matplotlib Figure before it is saved: axis labels,
a legend with no empty entry, and the target lines (and bands) its caption claims.

The figures are drawn by the functions the studies call, from the stored results where those hold what
the plot needs (estimator, placement) and from a small stand-in leaderboard for the gates figure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nomad_lab.gate import crossval
from nomad_lab.publish import gallery
from nomad_lab.studies import plots, registry
from nomad_lab.studies.budgeting import placement_report
from nomad_lab.studies.budgeting.estimator_figure import plot_by_class
from nomad_lab.studies.gating.family_plot import RowPoint, best_per_family, plot_by_kind
from tests.support.paths import ROOT

RESULTS = ROOT / "results"
GATES = f"{registry.get('gates').out_dir.removeprefix('results/')}/{registry.get('gates').figures[0]}"

CLAIMS: dict[str, dict[str, Any]] = {
    GATES: {"targets": ("recall@5 target 0.90", "leak target 5%"), "bands": False},
    "floor_sweep/leak_vs_recall.png": {"replaced_by": GATES},
    "placement/prefill_vs_turn.png": {"targets": (), "bands": True},
    "estimator/by_class.png": {"targets": ("goal: at most 6% per class", "goal: 4% overall"), "bands": False},
}
"""What each headline's caption promises a reader: the target lines it names and whether it draws
interval bands (placement: True once its study stores per-turn intervals)."""


def point(family: str, name: str, recall: float, off: float | None, unanswerable: float) -> RowPoint:
    off_topic = None if off is None else (off, max(0.0, off - 0.05), off + 0.05)
    return RowPoint(
        family,
        name,
        (recall, recall - 0.02, recall + 0.02),
        {"off-topic": off_topic, "unanswerable": (unanswerable, unanswerable - 0.1, unanswerable + 0.1)},
    )


LEADERBOARD = [
    point("floor", "floor (swept)", 0.90, 0.31, 0.75),
    point("floor", "floor@0.62 (fixed)", 0.46, 0.01, 0.3),  # leaks less, far below the recall target
    point("cosine", "cosine floor (swept)", 0.91, 0.32, 0.7),
    point("learned", "learned: query only", 0.90, 0.26, 0.6),
    point("learned", "learned: pool only", 0.92, 0.19, 0.7),
    point("learned", "learned: pool + query", 0.90, float("nan"), 0.7),
    point("transfer", "transfer: gate from pydocs", 0.85, None, 0.5),
]
KINDS = [("off-topic", "leak", 140), ("unanswerable", "pass rate", 107)]


def drawn(path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The Figure the study draws for headline ``path``, caught before it is saved."""
    if path == GATES:
        return plot_by_kind(
            LEADERBOARD, KINDS, recall_target=crossval.RECALL_TARGET, leak_target=crossval.LEAK_TARGET
        )
    if path == "estimator/by_class.png":
        return plot_by_class(json.loads((RESULTS / "estimator" / "summary.json").read_text())["errors"])
    assert path == "placement/prefill_vs_turn.png", path
    return placement_report.draw(json.loads((RESULTS / "placement" / "placement.json").read_text()))


def test_every_headline_has_its_claims_written_down() -> None:
    assert set(CLAIMS) == {src for _, src in gallery.HEADLINES} | {GATES}


@pytest.mark.parametrize("path", [p for p, claim in CLAIMS.items() if "replaced_by" not in claim])
def test_a_headline_figure_reads_without_its_caption(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fig = drawn(path, tmp_path, monkeypatch)
    assert plots.figure_problems(fig) == []
    claim = CLAIMS[path]
    assert set(claim["targets"]) <= set(plots.target_labels(fig))
    bands = [c for ax in fig.axes for c in ax.collections if type(c).__name__ == "FillBetweenPolyCollection"]
    assert bool(bands) == claim["bands"]
    sizes = [t.get_fontsize() for ax in fig.axes for t in (ax.xaxis.label, ax.yaxis.label)]
    assert min(sizes) >= 10, f"{path}: axis labels of {min(sizes)} pt shrink below legible in the gallery"


def test_the_gates_figure_has_a_panel_per_kind_and_draws_each_row_at_the_recall_it_reaches() -> None:
    best = best_per_family(LEADERBOARD, "off-topic", 0.9)
    assert [r.name for r in best] == [
        "floor (swept)",  # not the fixed point: it misses the recall target
        "learned: pool only",  # lowest off-topic leak; NaN and None rank last
        "cosine floor (swept)",
        "transfer: gate from pydocs",
    ]
    fig = plot_by_kind(LEADERBOARD, KINDS, recall_target=0.9, leak_target=0.05)
    assert [ax.get_ylabel() for ax in fig.axes] == [
        "off-topic leak (n = 140)",
        "unanswerable pass rate (n = 107)",
    ]
    labels = [t.get_text() for t in fig.legends[0].texts]
    rows = [t for t in labels if "target" not in t]
    assert rows[:2] == ["floor (swept)", "learned: pool only"] and "3 other rows" in rows
    transfer = [
        c for c in fig.axes[1].containers if abs(c.lines[0].get_xdata()[0] - 0.85) < 1e-9
    ]  # drawn at the recall it reaches, not at the target
    assert transfer and abs(transfer[0].lines[0].get_ydata()[0] - 0.5) < 1e-9
    legend = fig.legends[0].get_window_extent()
    for ax in fig.axes:  # outside every panel
        assert not legend.overlaps(ax.get_window_extent())


def test_the_checks_see_an_empty_entry_a_missing_label_and_no_legend() -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.bar([0, 1], [np.nan, 0.0], label="exact")  # the old estimator figure's empty "exact" entry
    ax.plot([0, 1], [1, 2], label="segmenter")
    ax.legend()
    ax.set_xlabel("class")
    assert plots.figure_problems(fig) == ["axes 0: no y label", "axes: legend entry 'exact' draws nothing"]
    bare, _ = plt.subplots()
    bare.axes[0].plot([0, 1], [0, 1])
    assert plots.figure_problems(bare) == ["axes 0: no y label", "axes: no x label", "no legend"]
    plt.close("all")


def test_the_gallery_links_the_readme_and_every_docs_page() -> None:
    nav = gallery.pages(ROOT)
    targets = ["../README.md"] + [f"../docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))]
    assert all(f'href="{t}"' in nav for t in targets)
    assert nav.index("docs/reproduce.md") < nav.index("docs/workbench.md") < nav.index("docs/benchmarks.md")
    page = (RESULTS / gallery.PAGE).read_text(encoding="utf-8")
    assert nav in page, "results/index.html is older than its writer: `nomad-lab reproduce --gallery-only`"
    for _, src in gallery.headline_figures(RESULTS):  # each headline opens at full size
        assert f'<a href="{src}"><img src="{src}"' in page
