"""``nomad-lab study labelling``: the labelling page's figures, from the sitting's own records.

The declaration, its table and its plot; the replay is :mod:`nomad_lab.eval.gating.label_replay`. It
replays the books sitting's decisions (``datasets/corpora/books/goldens``) in the order they were given,
reporting at each step the off-topic leak (the headline) and the unanswerable and near-domain pass rates
apart, each with its n and interval, for the floor (in sample) and the learned gate (out of fold); reads
the sitting's times (``datasets/corpora/books/sitting.jsonl``, ``draft.time``); and counts the drafts a
labeller kept as written (``datasets/corpora/pydocs/draft_verdicts.json``). Opt-in (``published=False``):
it retrieves the books' drafts into its store the first time.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt

from nomad_lab.core.workspace import DATASETS_DIR
from nomad_lab.data.refusal_kinds import OFF_TOPIC, REFUSAL_KINDS, kind_label
from nomad_lab.eval.gating.label_replay import draft_share, narrowing, sitting_times
from nomad_lab.eval.gating.label_sitting import LabelSession
from nomad_lab.gate import crossval
from nomad_lab.studies.params import PROGRESS, STORE, positive
from nomad_lab.studies.result import Figure, Page, Result
from nomad_lab.studies.shape import Param, Params, Study, argv

BOOKS = DATASETS_DIR / "corpora" / "books"
LINES = {"floor": "floor (top final score, in sample)", "gate": "gate (pool + coverage, out of fold)"}
PARAMS = (
    Param("library", Path, DATASETS_DIR / "library_growth", "the library labelled (*.md)"),
    Param("labels", Path, BOOKS / "goldens", "the sitting's goldens folder (drafts and decisions log)"),
    Param("sitting", Path, BOOKS / "sitting.jsonl", "the labeller's batches ({labels, seconds} per line)"),
    Param("draft_time", Path, BOOKS / "draft.time", "the drafting step's /usr/bin/time output"),
    Param(
        "verdicts",
        Path,
        DATASETS_DIR / "corpora" / "pydocs" / "draft_verdicts.json",
        "a labeller's verdicts on sampled drafts, before and after the drafter's checks",
    ),
    Param("step", int, 20, "replay the figures every N decisions", check=positive, metavar="N"),
    STORE,
    PROGRESS,
)


def compute(params: Params) -> dict[str, Any]:
    """The replay, the sitting's times and the draft share."""
    session = LabelSession.open(params.library, params.labels, params.store, progress=not params.no_progress)
    return {
        "narrowing": {
            "recallTarget": crossval.RECALL_TARGET,
            "refusalKinds": list(REFUSAL_KINDS),
            "headlineKind": OFF_TOPIC,
            "steps": narrowing(session, params.step),
            "walk": sitting_times(params.sitting, params.draft_time),
        },
        "draftShare": draft_share(params.verdicts),
    }


def _what(kind: str) -> str:
    return kind_label(kind)


def _cell(fig: dict[str, Any] | None, kind: str | None) -> str:
    if not fig:
        return "n/a"
    if kind is None:
        return f"{fig['leak']:.1%} [{fig['leakLow']:.1%}, {fig['leakHigh']:.1%}]"
    split = fig["byKind"].get(kind)
    if split is None:
        return "-"
    p = split["pass"]
    return f"{p[0]:.1%} [{p[1]:.1%}, {p[2]:.1%}]"


def markdown(result: dict[str, Any]) -> str:
    """One table per gate: at each step its recall@5 and, at that same point, the off-topic leak and the
    unanswerable and near-domain pass rates (n: the refusals of that kind labelled so far), then all
    refusals blended, labelled as such."""
    steps = result["narrowing"]["steps"]
    target = result["narrowing"]["recallTarget"]
    lines = [
        f"# At recall@5 >= {target:.2f}, per refusal kind, as labels came in "
        "(books library; labeller: an AI agent)",
        "",
    ]
    for name, title in LINES.items():
        heads = [f"{_what(k)} [95% CI] | n {k}" for k in REFUSAL_KINDS]
        lines += [
            f"**{title}**",
            "",
            f"| decisions | answerable | recall@5 | {' | '.join(heads)} | all refusals, blended [95% CI] |",
            "|---|---|---|" + "---|---|" * len(REFUSAL_KINDS) + "---|",
        ]
        for row in steps:
            fig = row.get(name)
            cells = [f"{_cell(fig, k)} | {row['refusalsByKind'][k]}" for k in REFUSAL_KINDS]
            recall = f"{fig['recall']:.2f}" if fig else "n/a"
            lines.append(
                f"| {row['decisions']} | {row['answerable']} | {recall} | {' | '.join(cells)} | "
                f"{_cell(fig, None)} |"
            )
        lines.append("")
    lines.append(
        '"n/a": no threshold reaches the recall target on those labels, or the gate is not fitted yet.'
    )
    return "\n".join(lines) + "\n"


def plot(steps: list[dict[str, Any]]) -> Any:
    """``narrowing.png``: one panel per refusal kind (the off-topic leak first), floor and gate with
    their intervals, the legend outside the axes."""
    fig, axes = plt.subplots(1, len(REFUSAL_KINDS), figsize=(11, 3.4), sharey=True)
    for ax, kind in zip(axes, REFUSAL_KINDS, strict=True):
        for name, colour in (("floor", "tab:blue"), ("gate", "tab:orange")):
            points = [(r["decisions"], r[name]["byKind"][kind]["pass"]) for r in steps if _has(r, name, kind)]
            if not points:
                continue
            x = [n for n, _ in points]
            ax.plot(x, [p[0] for _, p in points], "o-", color=colour, label=LINES[name])
            ax.fill_between(x, [p[1] for _, p in points], [p[2] for _, p in points], color=colour, alpha=0.2)
        ax.set_title(_what(kind))
        ax.set_xlabel("decisions so far (labelling order)")
        ax.set_ylim(0, 1)
    axes[0].set_ylabel(f"share passed at recall@5 >= {crossval.RECALL_TARGET:.2f}")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, frameon=False)
    fig.tight_layout()
    return fig


def _has(row: dict[str, Any], name: str, kind: str) -> bool:
    return bool(row.get(name)) and kind in row[name].get("byKind", {})


def pages(narrowed: Mapping[str, Any]) -> tuple[Page, ...]:
    """``narrowing.md`` from ``narrowing.json`` alone."""
    return (Page("narrowing.md", (markdown({"narrowing": narrowed}),)),)


def result(raw: dict[str, Any]) -> Result:
    """``narrowing.json``, its page and plot, and ``draft_share.json``."""
    figure = Figure("narrowing.png", partial(plot, raw["narrowing"]["steps"]))
    return STUDY.documented(
        raw, raw["narrowing"], json={"draft_share.json": raw["draftShare"]}, figures=(figure,)
    )


STUDY = Study(
    name="labelling",
    title="Labelling sitting on the Gutenberg books: the intervals per refusal kind as labels came in "
    "(an AI agent labelled)",
    run=compute,
    rows=lambda result: result["narrowing"]["steps"],
    document="narrowing.json",
    command=argv("study labelling --store runs/books.duckdb"),
    figures=("narrowing.png",),
    published=False,  # retrieves the books' drafts into its store the first time: its own command
    stage=63,
)
