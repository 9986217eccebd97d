"""Floor presets for the embedding model of a stored retrieval run, as a JSON a user carries to the assistant.

Why from a stored run: the run's pools are every question's full pre-floor candidate list, so the presets
(``nomad_lab.gate.floor_presets``: rules and intervals) are computed without retrieving again, for whichever
embedder the run used; the JSON names that embedder, so a floor is never carried to another model unawares.
Shared by ``nomad-lab floors presets`` and notebooks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nomad_lab.eval.gating.run_data import stored_pools
from nomad_lab.eval.gating.runs import RunChoice, parse_stored_run, resolve_run
from nomad_lab.gate import masks
from nomad_lab.gate.apply import spec_curve
from nomad_lab.gate.floor_presets import PresetFloor, preset_floors
from nomad_lab.gate.pools import PoolSet
from nomad_lab.store import Store
from nomad_lab.studies.result import Page, Result

__all__ = [
    "RunPools",
    "load_run_pools",
    "presets_json",
    "presets_markdown",
    "presets_result",
    "stored_presets",
]

FORMAT = "nomad-lab/floor-presets@1"


class RunPools:
    """A stored retrieval run's pools and the embedder identity recorded with it."""

    def __init__(self, run_id: str, pools: PoolSet, embedder: dict[str, Any]) -> None:
        self.run_id, self.pools, self.embedder = run_id, pools, embedder


def load_run_pools(store_path: str | Path, run: str | RunChoice | None = None) -> RunPools:
    """The pools of the stored run ``run`` names (a run id, ``main`` or ``latest``; None: ``latest``)
    from the store, read-only."""
    run_id = resolve_run(store_path, parse_stored_run(run))
    with Store(store_path, read_only=True) as store:
        stored = store.get_run(run_id)
        pools = stored_pools(store, run_id)
    params = stored.params
    embedder = params.get("embedder") or {
        "model": params.get("embeddingModel"),
        "method": params.get("embeddingMethod"),
    }
    return RunPools(run_id, pools, embedder)


def _preset_json(preset: PresetFloor) -> dict[str, Any]:
    return {
        "minFinalScore": preset.floor,
        "interval95": None if preset.low is None else [preset.low, preset.high],
        "undefinedInResamples": round(preset.undefined_share, 4),
        "rule": preset.rule.rule,
        "leakRate": preset.leak,
        "leakRate95": None if preset.leak_ci is None else list(preset.leak_ci),
        "recallAtK": preset.recall,
        "recallAtK95": None if preset.recall_ci is None else list(preset.recall_ci),
    }


def presets_json(run: RunPools, presets: list[PresetFloor]) -> dict[str, Any]:
    """The carried file: the embedder it is valid for, each preset's floor with its interval and costs."""
    pools = run.pools
    return {
        "format": FORMAT,
        "embedder": run.embedder,
        "corpusFingerprint": pools.fingerprint,
        "runId": run.run_id,
        "questions": {
            "answerable": int((pools.n_relevant > 0).sum()),
            "refusal": int(pools.expect_refusal.sum()),
        },
        "k": masks.DEFAULT_K,
        "presets": {p.rule.name: _preset_json(p) for p in presets},
    }


def presets_markdown(data: dict[str, Any]) -> str:
    """One row per preset: floor [95% interval], leak and recall@k there, and the rule."""
    lines = [
        f"Embedder: {data['embedder'].get('spec') or data['embedder'].get('model')} "
        f"({data['questions']['answerable']} answerable, {data['questions']['refusal']} refusal questions)",
        "",
        "| preset | floor [95% interval] | leak rate | recall@5 | rule |",
        "|---|---|---|---|---|",
    ]

    def num(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    for name, p in data["presets"].items():
        interval = p["interval95"] or [None, None]
        leak = "n/a" if p["leakRate"] is None else f"{p['leakRate']:.3f}"
        recall = "n/a" if p["recallAtK"] is None else f"{p['recallAtK']:.3f}"
        lines.append(
            f"| {name} | {num(p['minFinalScore'])} [{num(interval[0])}, {num(interval[1])}] "
            f"| {leak} | {recall} | {p['rule']} |"
        )
    return "\n".join(lines)


def stored_presets(store_path: str | Path, run: str | RunChoice | None = None) -> dict[str, Any]:
    """The presets file of the stored run ``run`` names (as :func:`load_run_pools`), as data."""
    stored = load_run_pools(store_path, run)
    return presets_json(stored, preset_floors(spec_curve(stored.pools, "floor")))


def presets_result(data: dict[str, Any], name: str = "presets.json") -> Result:
    """The presets file ``name`` and its markdown table beside it (``.md``), for the publish ring's
    writer: nothing is written here."""
    table = Page(str(Path(name).with_suffix(".md")), (presets_markdown(data),))
    return Result("presets", value=data, json={name: data}, pages=(table,))
