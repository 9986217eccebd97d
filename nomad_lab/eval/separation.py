"""The per-axis score-separation table: how far relevant chunks' scores sit from irrelevant ones'.

Why: a floor can only separate what the scores separate. For each axis (``semantic``: the raw cosine;
``final``: the reranked score the floor is applied to) the table gives min / p10 / median / p90 of the
returned chunks' scores on each side (a chunk is relevant when its doc is one of its question's relevant
docs; every chunk returned for a refusal question is irrelevant), and the gap between the relevant p10 and
the irrelevant p90: positive means a floor between them keeps 90% of relevant chunks while dropping 90%
of irrelevant ones; negative means the two overlap that much. The distributions are the report's own
(``AggregateMetrics.distributions``), so the table is read off a report or a live run alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["AXES", "separation_markdown", "separation_rows"]

AXES = {
    "semantic": ("relevantScores", "irrelevantScores"),
    "final": ("relevantFinalScores", "irrelevantFinalScores"),
}
STATS = ("count", "min", "p10", "median", "p90")


def separation_rows(distributions: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per axis and side, plus each axis's p10/p90 gap (None when a side is empty)."""
    rows = []
    for axis, (relevant_key, irrelevant_key) in AXES.items():
        relevant, irrelevant = distributions[relevant_key], distributions[irrelevant_key]
        gap = None
        if relevant.get("p10") is not None and irrelevant.get("p90") is not None:
            gap = relevant["p10"] - irrelevant["p90"]
        for side, dist in (("relevant", relevant), ("irrelevant", irrelevant)):
            rows.append({"axis": axis, "side": side, **{s: dist.get(s) for s in STATS}, "gap": gap})
    return rows


def separation_markdown(distributions: Mapping[str, Mapping[str, Any]]) -> str:
    lines = [
        "| axis | chunks | count | min | p10 | median | p90 | relevant p10 − irrelevant p90 |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in separation_rows(distributions):
        cells = ["n/a" if row[s] is None else f"{row[s]:.3f}" for s in STATS[1:]]
        gap = "" if row["side"] == "irrelevant" else ("n/a" if row["gap"] is None else f"{row['gap']:+.3f}")
        lines.append(
            f"| {row['axis']} | {row['side']} | {row['count']} | " + " | ".join(cells) + f" | {gap} |"
        )
    return "\n".join(lines)
