"""Embedders side by side: the same goldens retrieved with each embedder, and whether a floor transfers.

Why: the reference ships per-model default floors because a floor is a property of the embedding model.
Each stored retrieval run (one per ``--embedder``) gives recall and leak with no floor, the calibrated
floor for a leak target (``stats.calibrated_floor``: lowest floor whose 95% upper bound on leak is <=
alpha), and the margin between the weakest correct top hit and that floor. Then every embedder's
calibrated floor is applied to every other embedder's pools. A floor *transfers* from A to B when, at
A's floor, B still meets the leak target (95% upper bound <= alpha) and B's recall@k is within the
harness's 0.02 tolerance of B's recall at B's own calibrated floor.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.gate import gates
from nomad_lab.gate.stats import clopper_pearson_upper
from nomad_lab.gate.sweep import OperatingCurve, sweep
from nomad_lab.studies.gating.presets import RunPools, load_run_pools

__all__ = [
    "EmbedderResult",
    "compare_embedders",
    "comparison_markdown",
    "run_embedder_comparison",
    "write_comparison",
]

RECALL_TOLERANCE = 0.02


@dataclass(frozen=True)
class EmbedderResult:
    """One embedder's run: its curve, calibrated floor and margin."""

    label: str
    run: RunPools
    curve: OperatingCurve
    calibrated: float | None
    weakest_correct_top_hit: float | None

    @property
    def margin(self) -> float | None:
        if self.calibrated is None or self.weakest_correct_top_hit is None:
            return None
        return self.weakest_correct_top_hit - self.calibrated


def label_of(embedder: dict[str, Any]) -> str:
    return str(embedder.get("spec") or embedder.get("model") or "unknown")


def latest_run_per_embedder(store_path: str | Path) -> list[str]:
    """The newest retrieval run of each embedder in the store, in the order embedders first appear."""
    from nomad_lab.store import Store

    latest: dict[str, str] = {}
    with Store(store_path, read_only=True) as store:
        for run_id in store.run_ids("retrieval"):
            params = store.get_run(run_id).params
            latest[label_of(params.get("embedder") or {"model": params.get("embeddingModel")})] = run_id
    return list(latest.values())


def compare_embedders(
    store_path: str | Path, run_ids: list[str], alpha: float = 0.10
) -> list[EmbedderResult]:
    """Sweep the score floor over each run's pools; runs must share their questions."""
    results = []
    for run_id in run_ids:
        run = load_run_pools(store_path, run_id)
        curve = sweep(run.pools, "score_floor", gates.FLOOR_GRID)
        label = label_of(run.embedder)
        results.append(
            EmbedderResult(
                label,
                run,
                replace(curve, gate=label),
                curve.calibrated(alpha).floor,
                gates.weakest_correct_top_hit(run.pools),
            )
        )
    first = results[0].run.pools.ids if results else []
    for result in results[1:]:
        if sorted(result.run.pools.ids) != sorted(first):
            from nomad_lab.core.errors import NomadLabError

            raise NomadLabError(f"run {result.run.run_id} did not answer the same questions as {run_ids[0]}")
    return results


def at_floor(result: EmbedderResult, floor: float) -> dict[str, float]:
    """Leak (with its 95% upper bound) and recall@k of ``result``'s pools at ``floor``."""
    row = result.curve.at(floor)
    i = int(np.argmin(np.abs(result.curve.points - floor)))
    leaked = result.curve.leaked[i]
    return {**row, "leak_upper": clopper_pearson_upper(int(leaked.sum()), int(leaked.size))}


def transfer(source: EmbedderResult, target: EmbedderResult, alpha: float) -> dict[str, Any]:
    """``target``'s leak and recall at ``source``'s calibrated floor, and whether the floor transfers."""
    if source.calibrated is None or target.calibrated is None:
        return {"from": source.label, "to": target.label, "floor": source.calibrated, "transfers": None}
    there = at_floor(target, source.calibrated)
    own = at_floor(target, target.calibrated)
    k = target.curve.k
    transfers = there["leak_upper"] <= alpha and there[f"recall@{k}"] >= own[f"recall@{k}"] - RECALL_TOLERANCE
    return {
        "from": source.label,
        "to": target.label,
        "floor": source.calibrated,
        "leak": there["leak"],
        "leak_upper": there["leak_upper"],
        "recall": there[f"recall@{k}"],
        "own_floor": target.calibrated,
        "own_recall": own[f"recall@{k}"],
        "transfers": bool(transfers),
    }


def comparison_json(results: list[EmbedderResult], alpha: float) -> dict[str, Any]:
    rows = []
    for r in results:
        zero = at_floor(r, 0.0)
        k = r.curve.k
        rows.append(
            {
                "embedder": r.run.embedder,
                "runId": r.run.run_id,
                "recallNoFloor": [zero[f"recall@{k}"], zero["recall_lo"], zero["recall_hi"]],
                "leakNoFloor": [zero["leak"], zero["leak_lo"], zero["leak_hi"]],
                "calibratedFloor": r.calibrated,
                "recallAtCalibrated": None
                if r.calibrated is None
                else at_floor(r, r.calibrated)[f"recall@{k}"],
                "weakestCorrectTopHit": r.weakest_correct_top_hit,
                "margin": r.margin,
            }
        )
    pairs = [transfer(a, b, alpha) for a in results for b in results if a is not b]
    return {"alpha": alpha, "recallTolerance": RECALL_TOLERANCE, "embedders": rows, "transfer": pairs}


def _fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def comparison_markdown(data: dict[str, Any]) -> str:
    """The side-by-side table and the transfer table."""
    lines = [
        "| embedder | recall@5, no floor [95% CI] | leak, no floor "
        f"| calibrated floor (leak UB <= {data['alpha']}) | recall@5 there "
        "| weakest correct top hit | margin |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in data["embedders"]:
        recall, leak = row["recallNoFloor"], row["leakNoFloor"]
        lines.append(
            f"| {label_of(row['embedder'])} | {recall[0]:.3f} [{recall[1]:.3f}, {recall[2]:.3f}] "
            f"| {leak[0]:.3f} | {_fmt(row['calibratedFloor'])} | {_fmt(row['recallAtCalibrated'], 3)} "
            f"| {_fmt(row['weakestCorrectTopHit'], 3)} | {_fmt(row['margin'], 3)} |"
        )
    lines += [
        "",
        "| floor from | applied to | floor | leak (95% UB) | recall@5 | own floor's recall@5 | transfers? |",
    ]
    lines.append("|---|---|---|---|---|---|---|")
    for t in data["transfer"]:
        if t["transfers"] is None:
            lines.append(f"| {t['from']} | {t['to']} | {_fmt(t['floor'])} | n/a | n/a | n/a | undefined |")
            continue
        lines.append(
            f"| {t['from']} | {t['to']} | {t['floor']:.2f} | {t['leak']:.3f} ({t['leak_upper']:.3f}) "
            f"| {t['recall']:.3f} | {t['own_recall']:.3f} | {'yes' if t['transfers'] else 'no'} |"
        )
    return "\n".join(lines)


def write_comparison(
    store_path: str | Path, run_ids: list[str], out_dir: str | Path, alpha: float = 0.10
) -> dict[str, Any]:
    """Compare the runs; write ``embedders.json``, ``embedders.md`` and ``embedders.png`` into ``out_dir``."""
    from nomad_lab.studies.gating.curves import plot_floor_sweep
    from nomad_lab.studies.plots import save

    results = compare_embedders(store_path, run_ids, alpha)
    data = comparison_json(results, alpha)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "embedders.json").write_text(json.dumps(data, indent=2) + "\n")
    (out / "embedders.md").write_text(comparison_markdown(data) + "\n")
    fig = plot_floor_sweep([r.curve for r in results], title="Leak and recall@5 by floor, per embedder")
    for r in results:
        if r.calibrated is not None:
            fig.axes[0].axvline(r.calibrated, lw=1, ls="-.", color="black", alpha=0.6)
            fig.axes[0].annotate(
                f"{r.label}: {r.calibrated:.2f}", (r.calibrated, 0.5), rotation=90, fontsize=7
            )
    save(fig, out / "embedders.png")
    return data


def slug(spec: str) -> str:
    """A file-name-safe form of an embedder spec."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in spec).strip("-") or "default"


def run_embedder_comparison(
    specs: list[str], out_dir: str | Path, alpha: float = 0.10, progress: bool = True, **workspace: Any
) -> dict[str, Any]:
    """Retrieve the same goldens with each embedder spec (``eval retrieval``, stored, no floor), then compare
    them and write each embedder's floor presets beside the comparison (``presets-<spec>.json``).

    ``workspace`` holds the retrieval config's corpus/goldens/suite/store fields.
    """
    from nomad_lab.eval.retrieve import RetrievalRequest, retrieve
    from nomad_lab.studies.gating.presets import write_presets

    run_ids = []
    for spec in specs:
        config = RetrievalRequest(floor=0.0, embedder=spec, progress=progress, **workspace)
        run_ids.append(retrieve(config).run_id)
    store_path = workspace.get("store_path", RetrievalRequest.store_path)
    data = write_comparison(store_path, run_ids, out_dir, alpha)
    for spec, run_id in zip(specs, run_ids, strict=True):
        write_presets(store_path, Path(out_dir) / f"presets-{slug(spec)}.json", run_id)
    return data
