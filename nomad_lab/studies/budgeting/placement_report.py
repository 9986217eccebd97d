"""What the placement study prints and writes: the summary beside the seed's turn-14 figures, the
per-turn table, and the prefill-vs-turn plot. Kept apart from the replay (``placement.py``) so each
module holds one concern: measuring, or showing what was measured."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nomad_lab.core.reference import RAG_PLACEMENTS, RAG_TAIL

SERIES = (*RAG_PLACEMENTS, *(f"{placement}+rewrite" for placement in RAG_PLACEMENTS))
SEED_TURN = 14  # the seed measured prefill at turn 14: 231 ms tail, 539 ms front (llama3:8b)


def markdown(result: dict[str, Any]) -> str:
    """The per-series summary beside the seed's turn-14 figures, and the reload cost."""
    summary = result["summary"]
    lines = [
        "| series | turn | prefill ms | tokens evaluated | growth ms/turn |",
        "|---|---:|---:|---:|---:|",
    ]
    for key in SERIES:
        if key in summary:
            r = summary[key]
            lines.append(
                f"| {key} | {r['turn']} | {r['prefill_ms']:.0f} | {r['evaluated_tokens']} "
                f"| {r['slope_ms_per_turn']:+.1f} |"
            )
    if "front_over_tail" in summary:
        lines.append(
            f"\nfront/tail prefill at turn {summary[RAG_TAIL]['turn']}: {summary['front_over_tail']:.2f}x "
            f"(seed, llama3:8b at turn 14: 539/231 = {summary['seed_front_over_tail']:.2f}x)"
        )
    if fit := result.get("front_over_tail_fit"):
        lines.append(
            f"front/tail at turn {SEED_TURN} from each replay's fitted line: {fit['mean']:.2f}x "
            f"[95% CI {fit['low']:.2f}, {fit['high']:.2f}] over {len(fit['replays'])} paired replays "
            f"(replayed until within ±{100 * fit['target']:.0f}% or the budget; rewrite series once)"
        )
    reload = result["reload"]
    lines.append(
        f"\ncontext-window change: reload {reload['reload_ms']:.0f} ms + cold prefill "
        f"{reload['cold_prefill_ms']:.0f} ms, against {reload['warm_prefill_ms']:.0f} ms for a warm follow-up"
    )
    return "\n".join(lines) + "\n"


def turn_table(result: dict[str, Any], rewrite_between: bool = False) -> str:
    """Every turn of both placements: prompt tokens, evaluated vs reused, prefill, identical prefix."""
    rows = sorted(
        (r for r in result["rows"] if r["rewrite_between"] == rewrite_between),
        key=lambda r: (r["turn"], r["placement"]),
    )
    lines = [
        "| turn | placement | prompt tokens | evaluated | reused | prefill ms | identical prefix |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['turn']} | {r['placement']} | {r['prompt_tokens']} | {r['evaluated_tokens']} | "
        f"{r['reused_tokens']} | {r['prefill_ms']:.0f} | {r['prefix_share']:.0%} |"
        for r in rows
    ]
    return "\n".join(lines)


def write(result: dict[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """Rows and summary (JSON, markdown) and the prefill-vs-turn plot (PNG, SVG)."""
    import matplotlib.pyplot as plt  # heavy

    from nomad_lab.studies.plots import save  # heavy

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "placement.json", "md": out / "placement.md", "png": out / "prefill_vs_turn.png"}
    paths["json"].write_text(json.dumps(result, indent=2) + "\n")
    paths["md"].write_text(markdown(result))
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for key in SERIES:
        placement, _, rewrite = key.partition("+")
        series = [
            r for r in result["rows"] if r["placement"] == placement and r["rewrite_between"] == bool(rewrite)
        ]
        ax.plot(
            [r["turn"] for r in series],
            [r["prefill_ms"] for r in series],
            "o-" if not rewrite else "x--",
            ms=3,
            label=key,
        )
    ax.set_xlabel("turn")
    ax.set_ylabel("prefill (ms, llama.cpp t_p_eval)")
    ax.set_title(
        f"Prefill by RAG placement ({result['model']}, window {result['context_window']}, "
        f"median of {result.get('repeats', 1)})",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, paths["png"])
    return paths
