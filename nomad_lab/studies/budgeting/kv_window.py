"""The context window resolved before (the seed's scalar KV formula) and after (per-layer accounting).

Why: for a hybrid model the seed charges every layer ``head_count`` heads of KV, so the memory
ceiling it computes is a small fraction of the real one and the window snaps far lower than the
hardware allows. This table makes the difference visible for models whose GGUF metadata has the
per-layer forms, beside dense models (the local Gemma 3 and SmolLM2 files, read from disk) where
nothing may change.

The hybrid rows are metadata *shapes*, not measurements of real files: the layer patterns of a
hybrid that keeps attention in a few layers (``head_count_kv`` array with zeros) and of one that
keeps full attention every 4th layer (``full_attention_interval``). Their numbers are inputs written
here, and every output column is computed from them by ``nomad_lab.core.context_window``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from nomad_lab.backends.gguf_meta import read_metadata
from nomad_lab.backends.models import gemma_path, smollm2_path
from nomad_lab.core.context_window import (
    kv_account,
    kv_bytes_per_token,
    resolve_context_window,
    seed_kv_bytes_per_token,
)
from nomad_lab.studies.params import STORE, positive
from nomad_lab.studies.result import Page, Result
from nomad_lab.studies.shape import Param, Params, Study

GIB = 2**30

HYBRID_SHAPES: dict[str, dict[str, Any]] = {
    "per-layer array: 32 layers, attention (8 KV heads) in 4": {
        "general.architecture": "hybrid",
        "hybrid.block_count": 32,
        "hybrid.context_length": 262144,
        "hybrid.attention.head_count": 32,
        "hybrid.attention.head_count_kv": [8 if (i + 1) % 8 == 0 else 0 for i in range(32)],
        "hybrid.attention.key_length": 128,
    },
    "interval 4: 48 layers, 2 KV heads of 256": {
        "general.architecture": "interval",
        "interval.block_count": 48,
        "interval.context_length": 262144,
        "interval.attention.head_count": 16,
        "interval.attention.head_count_kv": 2,
        "interval.attention.key_length": 256,
        "interval.attention.value_length": 256,
        "interval.full_attention_interval": 4,
    },
    "per-layer array with absurd length (40 entries, 32 layers)": {
        "general.architecture": "hybrid",
        "hybrid.block_count": 32,
        "hybrid.context_length": 262144,
        "hybrid.attention.head_count": 32,
        "hybrid.attention.head_count_kv": [0, 0, 0, 8] * 10,
        "hybrid.attention.key_length": 128,
    },
}


@dataclass(frozen=True)
class WindowRow:
    model: str
    kv_before: int
    kv_after: int
    method: str
    window_before: int
    limited_before: str
    window_after: int
    limited_after: str
    notes: tuple[str, ...]


def window_row(name: str, info: Mapping[str, Any], available_bytes: int, model_bytes: int) -> WindowRow:
    """Both windows for one model's metadata under the same memory."""
    arch = info.get("general.architecture")
    trained = info.get(f"{arch}.context_length")
    before = seed_kv_bytes_per_token(info) or kv_bytes_per_token(None, None, name)
    account = kv_account(info)
    after = kv_bytes_per_token(info, None, name)
    windows = [
        resolve_context_window(
            model_max_ctx=trained, available_bytes=available_bytes, model_bytes=model_bytes, kv_bytes=kv
        )
        for kv in (before, after)
    ]
    return WindowRow(
        name,
        before,
        after,
        account.method,
        windows[0].tokens,
        windows[0].limited_by,
        windows[1].tokens,
        windows[1].limited_by,
        account.notes,
    )


def table(available_gib: float, model_gib: float, local: Mapping[str, Mapping[str, Any]]) -> list[WindowRow]:
    """Rows for the hybrid shapes and the ``local`` (name → metadata) dense models."""
    models = {**HYBRID_SHAPES, **local}
    return [
        window_row(name, info, int(available_gib * GIB), int(model_gib * GIB))
        for name, info in models.items()
    ]


def markdown(rows: list[WindowRow], available_gib: float, model_gib: float) -> str:
    lines = [
        f"Memory budget {available_gib:g} GiB, weights {model_gib:g} GiB, f16 KV, one slot.",
        "",
        "| model metadata | KV bytes/token before | after | method | window before | after | notes |",
        "|---|---:|---:|---|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.model} | {r.kv_before:,} | {r.kv_after:,} | {r.method} | {r.window_before:,} "
            f"({r.limited_before}) | {r.window_after:,} ({r.limited_after}) | {'; '.join(r.notes) or '–'} |"
        )
    return "\n".join(lines) + "\n"


PARAMS = (
    Param("available_gib", float, 16.0, "memory budget the window must fit", check=positive),
    Param("model_gib", float, 4.0, "weights sharing that memory", check=positive),
    STORE,
)


def compute(params: Params) -> dict[str, Any]:
    """The table for the hybrid shapes and the local dense GGUFs (their metadata read from disk)."""
    local = {f"local dense: {p().name}": read_metadata(p()) for p in (gemma_path, smollm2_path)}
    rows = table(params.available_gib, params.model_gib, local)
    return {"rows": rows, "available_gib": params.available_gib, "model_gib": params.model_gib}


def result(raw: dict[str, Any]) -> Result:
    """``table.md``: the window before and after per-layer KV accounting, per model."""
    page = Page("table.md", (markdown(raw["rows"], raw["available_gib"], raw["model_gib"]),))
    return Result("kv-window", value=raw, pages=(page,))


STUDY = Study(
    name="kv-window",
    title="Context window with per-layer KV accounting",
    run=compute,
    rows=lambda result: [asdict(r) for r in result["rows"]],
    tables=("table.md",),
    published=False,  # not part of the main job: its own command
    stage=80,
)
