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

from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.eval.gating.runs import RETRIEVE
from nomad_lab.gate import masks
from nomad_lab.gate.apply import spec_curve
from nomad_lab.gate.operating_curves import OperatingCurve
from nomad_lab.gate.stats import clopper_pearson_upper
from nomad_lab.retrieval.embedder_spec import EMBEDDER_SPEC
from nomad_lab.store import Store
from nomad_lab.studies.gating.curves import plot_floor_sweep
from nomad_lab.studies.gating.presets import RunPools, load_run_pools, presets_result, stored_presets
from nomad_lab.studies.gating.run_param import study_run
from nomad_lab.studies.params import WORKSPACE, alpha_param, suite_param
from nomad_lab.studies.result import Figure, Page, Result
from nomad_lab.studies.shape import Param, Params, Study, argv

__all__ = [
    "EmbedderResult",
    "compare_embedders",
    "comparison_markdown",
    "compute",
    "plot_comparison",
    "result",
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
        curve = spec_curve(run.pools, "floor")
        label = label_of(run.embedder)
        results.append(
            EmbedderResult(
                label,
                run,
                replace(curve, gate=label),
                curve.calibrated(alpha).floor,
                masks.weakest_correct_top_hit(run.pools),
            )
        )
    first = results[0].run.pools.ids if results else []
    for result in results[1:]:
        if sorted(result.run.pools.ids) != sorted(first):
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


def plot_comparison(results: list[EmbedderResult]) -> Any:
    """Every embedder's leak and recall@5 by floor, its calibrated floor marked."""
    fig = plot_floor_sweep([r.curve for r in results], title="Leak and recall@5 by floor, per embedder")
    for r in results:
        if r.calibrated is not None:
            fig.axes[0].axvline(r.calibrated, lw=1, ls="-.", color="black", alpha=0.6)
            fig.axes[0].annotate(
                f"{r.label}: {r.calibrated:.2f}", (r.calibrated, 0.5), rotation=90, fontsize=7
            )
    return fig


def slug(spec: str) -> str:
    """A file-name-safe form of an embedder spec."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in spec).strip("-") or "default"


PARAMS = (
    Param(
        "embedder",
        EMBEDDER_SPEC,
        ("st:", "wordllama:"),
        "retrieve the goldens with these embedders first, no floor (specs as eval retrieval --embedder)",
        many=True,
        metavar="SPEC",
    ),
    Param(
        "run",
        str,
        None,
        "compare these stored retrieval runs instead of retrieving (`latest`: the latest run of each "
        "embedder in the store)",
        many=True,
        metavar="RUN_ID",
    ),
    alpha_param(0.10, "leak target for the calibrated floor"),
    suite_param("core,off_topic", "suites retrieved with --embedder"),
    *WORKSPACE,
)


def compute(params: Params) -> dict[str, Any]:
    """Retrieve the goldens with each embedder (or read the stored runs given), then compare them."""
    retrieved: dict[str, str] = {}
    if params.run:
        runs = latest_run_per_embedder(params.store) if list(params.run) == ["latest"] else list(params.run)
    else:
        for spec in params.embedder:
            retrieved[spec] = study_run(params, RETRIEVE, embedder=spec)
        runs = list(retrieved.values())
    if len(runs) < 2:
        raise NomadLabError(
            f"{params.store}: need retrieval runs of two embedders (found {len(runs)}); give two --embedder "
            "specs, or run `nomad-lab eval retrieval --embedder SPEC` for each"
        )
    results = compare_embedders(params.store, runs, params.alpha)
    data = comparison_json(results, params.alpha)
    presets = {spec: stored_presets(params.store, run_id) for spec, run_id in retrieved.items()}
    return {"results": results, "data": data, "retrieved": retrieved, "presets": presets}


def result(raw: dict[str, Any]) -> Result:
    """``embedders.json``, ``embedders.md`` and ``embedders.png`` (every curve, calibrated floors
    marked), and the floor presets of each embedder retrieved here (``presets-<spec>.json`` and its
    table); the publish ring writes them."""
    documents: dict[str, Any] = {"embedders.json": raw["data"]}
    pages = [Page("embedders.md", (comparison_markdown(raw["data"]),))]
    for spec, presets in raw["presets"].items():
        carried = presets_result(presets, f"presets-{slug(spec)}.json")
        documents |= carried.json
        pages += carried.pages
    figure = Figure("embedders.png", partial(plot_comparison, raw["results"]))
    return Result("embedders", value=raw, json=documents, pages=tuple(pages), figures=(figure,))


STUDY = Study(
    name="embedders",
    title="Embedders side by side: recall, leak, calibrated floor, and whether it transfers; floor presets",
    run=compute,
    rows=lambda result: result["data"]["embedders"],
    command=argv("study embedders --embedder st: --embedder wordllama: --store runs/embedders.duckdb"),
    figures=("embedders.png",),
    tables=("embedders.md", "presets-st.md", "presets-wordllama.md"),
    published=False,  # two embedders over the goldens: its own command
    stage=62,
    notebook="embedders",
)
