"""``nomad-lab study draft-rating``: model drafts against template drafts, rated blind.

Counts a rater's verdicts on a blind sheet (``nomad-lab goldens sheet``) with the sheet's key
(:func:`nomad_lab.eval.gating.draft_rates.rating_rates`): per source (template, model) and kind
(answerable, refusal) the share usable as written, needing an edit and broken, each with its n and 95%
Wilson interval, beside the model's cost per draft and the machine's load while it drafted (the
``draft_cost.json`` that ``goldens draft --backend`` writes). The issue's targets are stored with them
(model drafts at least :data:`USABLE_TARGET` usable and at most :data:`BROKEN_TARGET` broken) so the
page states whether they are met from the stored figures. Reads files only: no model, no store read.
Opt-in (``published=False``): the verdicts come from a rater, not from a rerun.
Its second library's run (``Study.also``, GnuCash: ``results/labelling/rating_gnucash``) is the same
command on that library's verdicts, key and cost.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nomad_lab.core.workspace import DATASETS_DIR
from nomad_lab.eval.gating.draft_rates import VERDICTS, rating_rates
from nomad_lab.studies.params import STORE
from nomad_lab.studies.result import Page, Result
from nomad_lab.studies.shape import Output, Param, Params, Study, argv

HANDBOOK = DATASETS_DIR / "corpora" / "handbook"
GNUCASH = "datasets/corpora/gnucash"
"""The second library rated the same way (its files named relative to the project root, as typed)."""
USABLE_TARGET = 0.60
"""Issue 43's target: model drafts usable as written at least this often ..."""
BROKEN_TARGET = 0.05
"""... and broken at most this often."""
LEVELS = {"usable": "usable as written", "edit": "needs an edit", "broken": "broken"}
PARAMS = (
    Param("verdicts", Path, HANDBOOK / "rating" / "verdicts.json", "the rater's verdicts, who and rubric"),
    Param("key", Path, HANDBOOK / "rating" / "key.json", "the sheet's key (row -> source and kind)"),
    Param("cost", Path, HANDBOOK / "drafts" / "draft_cost.json", "goldens draft --backend's cost file"),
    STORE,
)


def compute(params: Params) -> dict[str, Any]:
    """The rates per source and kind, the model's cost and the targets."""
    cost = json.loads(params.cost.read_text(encoding="utf-8"))
    return {
        **rating_rates(params.verdicts, params.key),
        "cost": cost,
        "targets": {"modelUsable": USABLE_TARGET, "modelBroken": BROKEN_TARGET},
    }


def rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One stored row per source and kind."""
    return [
        {"source": source, "kind": kind, **group}
        for source, kinds in result["bySource"].items()
        for kind, group in kinds.items()
    ]


def markdown(result: Mapping[str, Any]) -> str:
    """The table of rates per source and kind, who rated, the rubric and the model's cost."""
    heads = " | ".join(f"{LEVELS[v]} [95% CI]" for v in VERDICTS)
    lines = [
        f"# Drafts rated blind on {result['library']}",
        "",
        f"Rated by {result['who']}.",
        "",
        f"| source | kind | n | {heads} |",
        "|---|---|---:|" + "---|" * len(VERDICTS),
    ]
    for row in rows(result):
        cells = [
            f"{row[v]['count']} ({row[v]['share']:.0%}) [{row[v]['low']:.0%}, {row[v]['high']:.0%}]"
            for v in VERDICTS
        ]
        lines.append(f"| {row['source']} | {row['kind']} | {row['n']} | {' | '.join(cells)} |")
    lines += ["", "**Rubric.**", ""]
    lines += [f"- *{LEVELS[v]}*: {result['rubric'][v]}" for v in VERDICTS]
    cost, load = result["cost"], result["cost"]["load"]
    lines += [
        "",
        f"**Cost.** {cost['backend']}: {cost['secondsPerPassage']:.1f} s a passage asked (median "
        f"{cost['medianSecondsPerPassage']:.1f} s) over {cost['passages']} passages, "
        f"{cost['secondsPerKeptDraft']:.1f} s a draft kept; load average {load['loadBefore'][0]:.2f} before, "
        f"{load['loadAfter'][0]:.2f} after, other processes' share of the {load['cpus']} CPUs "
        f"{load['othersCpuShare']:.0%}.",
    ]
    return "\n".join(lines) + "\n"


def pages(document: Mapping[str, Any]) -> tuple[Page, ...]:
    """``draft_rating.md`` from ``draft_rating.json`` alone."""
    return (Page("draft_rating.md", (markdown(document),)),)


def result(raw: dict[str, Any]) -> Result:
    """``draft_rating.json`` and its page."""
    return STUDY.documented(raw, raw)


STUDY = Study(
    name="draft-rating",
    title="Model drafts against template drafts, rated blind on the Debian handbook (an AI agent rated)",
    run=compute,
    out_dir="results/labelling/rating",
    published=False,  # the verdicts are a rater's, not a rerun's: its command refreshes the page
    stage=63,
    also=(
        Output(
            "Model drafts against template drafts, rated blind on GnuCash (an AI agent rated)",
            argv(
                f"study draft-rating --verdicts {GNUCASH}/rating/verdicts.json"
                f" --key {GNUCASH}/rating/key.json --cost {GNUCASH}/drafts/draft_cost.json"
                " --out results/labelling/rating_gnucash"
            ),
            "results/labelling/rating_gnucash",
            tables=("draft_rating.md",),
        ),
    ),
)
