"""Every headline figure of the gallery, inspected as a matplotlib Figure before it is saved: axis labels,
a legend with no empty entry, and the target lines (and bands) its caption claims.

The figures are drawn by the functions the studies call, from the stored results where those hold what
the plot needs (estimator, placement) and from a small stand-in leaderboard for the gates figure (its
stored JSON keeps the figures, not the curves)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nomad_lab.gate import crossval
from nomad_lab.gate.operating_curves import OperatingCurve
from nomad_lab.studies import gallery, plots, registry
from nomad_lab.studies.budgeting import placement_report
from nomad_lab.studies.budgeting.estimator_figure import plot_by_class
from nomad_lab.studies.gating.family_plot import FamilyCurve, best_per_family, plot_gate_families
from tests.support.paths import ROOT

RESULTS = ROOT / "results"
GATES = f"{registry.get('gates').out_dir.removeprefix('results/')}/{registry.get('gates').figures[0]}"

CLAIMS: dict[str, dict[str, Any]] = {
    GATES: {"targets": ("recall@5 target 0.90", "leak target 5%"), "bands": True},
    "floor_sweep/leak_vs_recall.png": {"replaced_by": GATES},
    "placement/prefill_vs_turn.png": {"targets": (), "bands": True},
    "estimator/by_class.png": {"targets": ("goal: at most 6% per class", "goal: 4% overall"), "bands": False},
}
"""What each headline's caption promises a reader: the target lines it names and whether it draws
interval bands (placement: True once its study stores per-turn intervals)."""


def curve(name: str, steepness: float) -> OperatingCurve:
    points = np.linspace(0, 1, 30)
    recall = 0.95 - 0.95 * points**2
    leak = 0.45 * recall**steepness
    none = np.zeros((30, 1), dtype=bool)
    return OperatingCurve(
        name,
        points,
        leak,
        leak * 0.8,
        leak * 1.2,
        recall,
        recall - 0.03,
        recall + 0.03,
        np.zeros(30),
        none,
        none.astype(float),
    )


LEADERBOARD = [
    FamilyCurve("floor", "floor (swept)", curve("floor", 3), 0.31),
    FamilyCurve("cosine", "cosine floor (swept)", curve("cosine", 3.1), 0.32),
    FamilyCurve("learned", "learned: query only", curve("q", 4), 0.26),
    FamilyCurve("learned", "learned: pool only", curve("p", 5), 0.19),
    FamilyCurve("learned", "learned: pool + query", curve("pq", 4.5), float("nan")),
    FamilyCurve("transfer", "transfer: gate from pydocs", curve("t", 6), None),
]


def drawn(path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The Figure the study draws for headline ``path``, caught before it is saved."""
    if path == GATES:
        return plot_gate_families(
            LEADERBOARD, recall_target=crossval.RECALL_TARGET, leak_target=crossval.LEAK_TARGET
        )
    if path == "estimator/by_class.png":
        return plot_by_class(json.loads((RESULTS / "estimator" / "summary.json").read_text())["errors"])
    caught: dict[str, Any] = {}
    monkeypatch.setattr(plots, "save", lambda fig, where: caught.setdefault(Path(where).name, fig))
    placement_report.write(json.loads((RESULTS / "placement" / "placement.json").read_text()), tmp_path)
    return caught[Path(path).name]


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


def test_the_gates_figure_shows_the_floor_and_each_familys_best_and_folds_the_rest() -> None:
    best = best_per_family(LEADERBOARD)
    assert [r.name for r in best] == [
        "floor (swept)",
        "learned: pool only",  # lowest leak at the recall target; NaN and None rank last
        "cosine floor (swept)",
        "transfer: gate from pydocs",
    ]
    fig = plot_gate_families(LEADERBOARD, recall_target=0.9, leak_target=0.05)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels[0] == "2 other variants" and "floor (swept) (leak 31% at target)" in labels
    assert "transfer: gate from pydocs (recall target not reached)" in labels


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
