"""The library-growth study's report: its rows (:class:`GrowthRow`), its tables and its plot, and the
pages rendered from its stored ``growth.json`` alone, so a committed page is checked against the figures it
shows (``tests/studies/test_result_pages.py``) and can be rebuilt without rerunning the sizes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from nomad_lab.studies.gating.growth_kinds import LEAK_KIND, Interval, KindPass, ci, kinds_markdown
from nomad_lab.studies.result import Page

PLOT = "leak_vs_library_size.png"


@dataclass(frozen=True)
class GrowthRow:
    """Leak and recall at one library size."""

    label: str
    docs: int
    megabytes: float
    chunks: int
    leak_by_floor: dict[str, Interval]  # floor -> off-topic leak rate
    recall_by_floor: dict[str, Interval]  # floor -> core recall@5
    judge_floor: float
    leak_judge: Interval | None
    judge_calls: int
    judge_failures: int
    refusals: int
    embedded: int = 0  # chunks embedded at this size (the rest came from the cache)
    build_seconds: float = 0.0  # chunking and embedding them
    index_mb: float = 0.0  # the vectors: chunks x dimension x 4 bytes
    calibrated_floor: float | None = None  # lowest floor whose 95% leak upper bound is <= alpha
    leak_calibrated: Interval | None = None
    recall_calibrated: Interval | None = None
    by_kind: dict[str, KindPass] = field(default_factory=dict)  # every refusal kind, off-topic included

    @property
    def chunks_per_s(self) -> float:
        """Embedding throughput of this size's build (NaN when everything came from the cache)."""
        return (
            self.embedded / self.build_seconds if self.embedded and self.build_seconds > 0 else float("nan")
        )


def markdown(rows: Sequence[GrowthRow], judge_model: str | None, embedder: str | None = None) -> str:
    """One row per size: leak at each floor, leak with the judge after the default floor, core recall."""
    floors = list(rows[0].leak_by_floor) if rows else []
    judge = f" | leak, floor {rows[0].judge_floor:g} + {judge_model}" if rows and judge_model else ""
    head = (
        "| library | docs | MB | chunks | "
        + " | ".join(f"leak, floor {f}" for f in floors)
        + judge
        + " | "
        + " | ".join(f"recall@5, floor {f}" for f in floors)
        + " |"
    )
    lines = [head, "|" + "---|" * (4 + 2 * len(floors) + (1 if judge else 0))]
    for r in rows:
        cells = [r.label, str(r.docs), f"{r.megabytes:.2f}", str(r.chunks)]
        cells += [ci(r.leak_by_floor[f]) for f in floors]
        if judge:
            cells.append(f"{ci(r.leak_judge)} ({r.judge_calls} calls, {r.judge_failures} failed open)")
        cells += [ci(r.recall_by_floor[f]) for f in floors]
        lines.append("| " + " | ".join(cells) + " |")
    refusals = {r.refusals for r in rows}
    kinds = kinds_markdown(rows)
    lines.append(
        f"\nLeak: share of the {'/'.join(map(str, sorted(refusals)))} refusals of kind {LEAK_KIND} (core and "
        "off-topic suites) that get any context"
        + ("; the other kinds are reported apart below" if kinds else "")
        + ". 95% bootstrap intervals (2,000 seeded resamples)."
    )
    return "\n".join(lines) + "\n\n" + scale_markdown(rows, embedder) + (f"\n{kinds}" if kinds else "")


def scale_markdown(rows: Sequence[GrowthRow], embedder: str | None = None) -> str:
    """Per size: what the index build embedded and how fast, the vectors' size, and the floor calibrated
    at that size (lowest floor whose 95% Clopper-Pearson leak bound is <= alpha) with leak and recall."""
    lines = [
        f"Index and calibrated floor per size (embedder: {embedder or 'default MiniLM'}):",
        "",
        "| library | MB | chunks | embedded | chunks/s | index MB | calibrated floor | leak at it "
        "| recall@5 at it |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        rate = "cached" if not r.embedded else f"{r.chunks_per_s:.1f}"
        floor = "none reaches it" if r.calibrated_floor is None else f"{r.calibrated_floor:.2f}"
        lines.append(
            f"| {r.label} | {r.megabytes:.2f} | {r.chunks} | {r.embedded} | {rate} | {r.index_mb:.2f} | "
            f"{floor} | {ci(r.leak_calibrated)} | {ci(r.recall_calibrated)} |"
        )
    return "\n".join(lines) + "\n"


def plot(rows: Sequence[GrowthRow], judge_model: str | None) -> Any:
    """Leak (left) and core recall@5 (right) against library size, one line per gate, interval bars."""
    import matplotlib.pyplot as plt  # heavy

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    x = [r.megabytes for r in rows]

    def draw(ax: Any, series: list[Interval], label: str, **style: Any) -> None:
        lows, highs = [v[0] - v[1] for v in series], [v[2] - v[0] for v in series]
        ax.errorbar(x, [v[0] for v in series], yerr=[lows, highs], ms=3, capsize=3, label=label, **style)

    for floor in rows[0].leak_by_floor:
        draw(left, [r.leak_by_floor[floor] for r in rows], f"floor {floor}", marker="o")
        draw(right, [r.recall_by_floor[floor] for r in rows], f"floor {floor}", marker="o")
    if all(r.leak_calibrated is not None for r in rows):
        draw(left, [r.leak_calibrated for r in rows], "floor calibrated per size", marker="^", ls=":")  # type: ignore[misc]
        draw(right, [r.recall_calibrated for r in rows], "floor calibrated per size", marker="^", ls=":")  # type: ignore[misc]
    if judge_model and all(r.leak_judge is not None for r in rows):
        label = f"floor {rows[0].judge_floor:g} + {judge_model}"
        draw(left, [r.leak_judge for r in rows], label, marker="s", ls="--")  # type: ignore[misc]
    left.set_title("off-topic leak rate", fontsize=10)
    right.set_title("core recall@5", fontsize=10)
    for ax in (left, right):
        ax.set_xlabel("library size (MB of text)")
        if x and max(x) > 20 * min(x):
            ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def rows_json(rows: Sequence[GrowthRow]) -> list[dict[str, Any]]:
    """The rows as ``growth.json`` stores them (with each size's embedding throughput)."""
    return [asdict(r) | {"chunks_per_s": r.chunks_per_s} for r in rows]


def rows_of(document: Mapping[str, Any]) -> list[GrowthRow]:
    """The rows of a stored ``growth.json`` (its throughput left to the row to compute)."""
    rows = []
    for stored in document["rows"]:
        values = {k: v for k, v in stored.items() if k != "chunks_per_s"}
        values["by_kind"] = {kind: KindPass(**p) for kind, p in values["by_kind"].items()}
        rows.append(GrowthRow(**values))
    return rows


def pages(document: Mapping[str, Any]) -> tuple[Page, ...]:
    """``growth.md`` from the stored document alone."""
    text = markdown(rows_of(document), document["judge_model"], document.get("embedder"))
    return (Page("growth.md", (text,)),)
