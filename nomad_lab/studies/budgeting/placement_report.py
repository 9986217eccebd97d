"""What the placement study publishes, as the page and plot of its value: the exact tokens and modelled
ms at the seed's turn 14, the per-turn table, the real calls checked against the accounting, and the
plot. Kept apart from the measuring (``placement.py``) so each module holds one concern: measuring, or
showing what was measured."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nomad_lab.core.reference import RAG_PLACEMENTS
from nomad_lab.studies.result import Page

SERIES = (*RAG_PLACEMENTS, *(f"{placement}+rewrite" for placement in RAG_PLACEMENTS))
SEED_TURN = 14  # the seed measured prefill at turn 14: 231 ms tail, 539 ms front (llama3:8b)


def _series(result: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    placement, _, rewrite = key.partition("+")
    return sorted(
        (r for r in result["rows"] if r["placement"] == placement and r["rewrite_between"] == bool(rewrite)),
        key=lambda r: r["turn"],
    )


def markdown(result: Mapping[str, Any]) -> str:
    """Per series at turn 14: tokens (exact) and modelled ms; the ratio against the seed; the checks."""
    turn = result["tokens"]["turn"]
    lines = [
        "| series | turn | prompt tokens | evaluated | reused | modelled ms [95% CI] |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key in SERIES:
        r = next(r for r in _series(result, key) if r["turn"] == turn)
        lines.append(
            f"| {key} | {turn} | {r['prompt_tokens']} | {r['evaluated_tokens']} | {r['reused_tokens']} "
            f"| {r['modelled_ms']:.0f} [{r['modelled_low']:.0f}, {r['modelled_high']:.0f}] |"
        )
    tokens, model = result["tokens"], result["modelled"]
    ratio = model["front_over_tail"]
    lines += [
        "",
        f"front/tail at turn {turn}: {tokens['front_over_tail']:.2f}x in tokens evaluated (exact), "
        f"{ratio['mean']:.2f}x [95% CI {ratio['low']:.2f}, {ratio['high']:.2f}] in modelled ms "
        f"(seed, llama3:8b: 539/231 = {result['seed_front_over_tail']:.2f}x); interval ±"
        f"{100 * model['half_width']:.1f}% after {model['rounds']} sample rounds: the ±"
        f"{100 * model['target']:.0f}% target is {'met' if model['met'] else 'NOT met'}",
    ]
    summary = result["summary"]
    if "timed_front_over_tail" in summary:
        lines.append(
            f"timed directly at turn {turn}: tail {summary['tail']['timed_ms']:.0f} ms, front "
            f"{summary['front']['timed_ms']:.0f} ms ({summary['timed_front_over_tail']:.2f}x; one call each)"
        )
    checks = result["check_summary"]
    lines.append(
        f"real calls against the accounting: {checks['calls']} checked, {checks['equal']} equal, "
        f"{checks['not reported']} not reported by the server, {checks['differs']} differ"
    )
    if reload := result.get("reload"):
        lines.append(
            f"\ncontext-window change: reload {reload['reload_ms']:.0f} ms + cold prefill "
            f"{reload['cold_prefill_ms']:.0f} ms, against {reload['warm_prefill_ms']:.0f} ms for a warm "
            "follow-up"
        )
    if replay := result.get("replay"):
        measured = replay["measured"]
        lines.append(
            f"\nwall-clock replay (opt-in check): front/tail at turn {turn} measured "
            f"{measured['mean']:.2f}x [{measured['low']:.2f}, {measured['high']:.2f}] "
            f"over {replay['replays']} replays, modelled {ratio['mean']:.2f}x"
        )
    return "\n".join(lines) + "\n"


def cost_table(result: Mapping[str, Any]) -> str:
    """The fitted cost model's coefficients with their bootstrap intervals."""
    model = result["cost_model"]
    lines = [
        f"`{model['model']}` (n evaluated tokens, c cached context; {model['points']} timed prefills)",
        "",
        "| term | value | 95% CI |",
        "|---|---:|---:|",
    ]
    for term, v in model["coefficients"].items():
        lines.append(f"| {term} | {v['value']:.4g} | [{v['low']:.4g}, {v['high']:.4g}] |")
    return "\n".join(lines)


def check_table(result: Mapping[str, Any]) -> str:
    """Every real call: the accounting's counts, the engine's, the verdict, and measured vs modelled ms."""
    lines = [
        "| placement | call | prompt | evaluated | reused | engine evaluated | engine reused | verdict "
        "| ms | modelled ms |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for c in result["checks"]:
        lines.append(
            f"| {c['placement']} | {c['call']} | {c['prompt_tokens']} | {c['evaluated_tokens']} | "
            f"{c['reused_tokens']} | {c['engine_evaluated_tokens']} | {c['engine_reused_tokens']} | "
            f"{c['verdict']} | {c['ms'] or 0:.0f} | {c['modelled_ms']:.0f} |"
        )
    return "\n".join(lines)


def turn_table(result: Mapping[str, Any], rewrite_between: bool = False) -> str:
    """Every turn of both placements: prompt tokens, evaluated vs reused (exact), modelled ms."""
    rows = sorted(
        (r for r in result["rows"] if r["rewrite_between"] == rewrite_between),
        key=lambda r: (r["turn"], r["placement"]),
    )
    lines = [
        "| turn | placement | prompt tokens | evaluated | reused | modelled ms |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['turn']} | {r['placement']} | {r['prompt_tokens']} | {r['evaluated_tokens']} | "
        f"{r['reused_tokens']} | {r['modelled_ms']:.0f} |"
        for r in rows
    ]
    return "\n".join(lines)


def pages(result: Mapping[str, Any]) -> tuple[Page, ...]:
    """``placement.md`` from ``placement.json`` alone: turn 14, the costs, the checks, every turn."""
    tables = (markdown(result), cost_table(result), check_table(result), turn_table(result))
    return (Page("placement.md", tables),)


def draw(result: Mapping[str, Any]) -> Any:
    """The plot (``prefill_vs_turn.png``): tokens evaluated and modelled ms per turn, with the directly
    timed turns marked."""
    import matplotlib.pyplot as plt  # heavy: matplotlib, only when the plot is drawn

    fig, (tokens_ax, ms_ax) = plt.subplots(1, 2, figsize=(10, 4))
    for key in SERIES:
        series = _series(result, key)
        style = "o-" if "+" not in key else "x--"
        turns = [r["turn"] for r in series]
        tokens_ax.plot(turns, [r["evaluated_tokens"] for r in series], style, ms=3, label=key)
        line = ms_ax.plot(turns, [r["modelled_ms"] for r in series], style, ms=3, label=key)[0]
        ms_ax.fill_between(
            turns,
            [r["modelled_low"] for r in series],
            [r["modelled_high"] for r in series],
            color=line.get_color(),
            alpha=0.15,
        )
    timed = [c for c in result["checks"] if c["call"].startswith("turn ") and c["ms"]]
    ms_ax.plot(
        [int(c["call"].split()[1]) for c in timed],
        [c["ms"] for c in timed],
        "k*",
        ms=7,
        label="timed directly",
    )
    tokens_ax.set(xlabel="turn", ylabel="prompt tokens evaluated (exact)")
    ms_ax.set(xlabel="turn", ylabel="prefill ms (cost model, 95% band)")
    fig.suptitle(
        f"Prefill by RAG placement ({result['model']}, window {result['context_window']})", fontsize=9
    )
    tokens_ax.legend(fontsize=8)
    ms_ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
