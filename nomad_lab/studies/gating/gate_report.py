"""The gate leaderboard as a markdown table, a JSON file, one figure of every operating curve, and the
fitted gate file (what ``study gates`` writes under ``results/gates/``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nomad_lab.gate import crossval


def _triple(t: tuple[float, float, float] | None, pct: bool = True) -> str:
    if t is None:
        return "not reached"
    f = (lambda v: f"{100 * v:.1f}%") if pct else (lambda v: f"{v:.3f}")
    return f"{f(t[0])} [{f(t[1])}, {f(t[2])}]"


def leaderboard(result: dict[str, Any]) -> str:
    lines = [
        f"| gate | leak at recall@5 >= {crossval.RECALL_TARGET:.2f} [95% CI] | recall@5 there "
        f"| recall@5 at leak <= {100 * crossval.LEAK_TARGET:.0f}% [95% CI] | ROC AUC [95% CI] "
        "| model calls / question | ms / question | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        f = row.figures
        if f is None:
            lines.append(f"| {row.name} | - | - | - | - | - | - | {row.note} |")
            continue
        note = row.note
        if f.reached < 1:
            note = (
                note + "; " if note else ""
            ) + f"recall target met in {100 * f.reached:.0f}% of training folds"
        lines.append(
            f"| {row.name} | {_triple(f.leak_at_recall)} | {_triple(f.recall_at_recall, False)} "
            f"| {_triple(f.recall_at_leak, False)} | {_triple(f.auc, False)} "
            f"| {row.calls:.2f} | {'-' if row.ms != row.ms else f'{row.ms:.3f}'} | {note} |"
        )
    return "\n".join(lines)


def coefficients(result: dict[str, Any]) -> str:
    lines = ["| feature (standardized) | coefficient |", "|---|---|"]
    lines += [f"| {r['feature']} | {r['coef']:+.3f} |" for r in result["coefficients"]]
    return "\n".join(lines)


def markdown(result: dict[str, Any]) -> str:
    bank = result["bank"]
    head = (
        f"Run {result['run']}: {result['questions']} questions ({result['answerable']} answerable with a "
        f"relevant document, {result['refusals']} refusals), recall@5 with no gate "
        f"{result['recallNoGate']:.3f}; embedder {result['embedder'].get('model')}; "
        f"{'bank: ' + str(bank['questions']) + ' extra negatives' if bank else 'no out-of-scope bank'}; "
        f"{result['groups']} question groups. Every figure out of fold "
        f"({result['rows'][0].figures.repeats}x{result['rows'][0].figures.folds}-fold, grouped, operating "
        f"points chosen on training folds) unless noted; {result['seconds']:.0f} s."
    )
    command = ["nomad-lab", "study", "gates"]
    for name, value in result["params"].items():
        if name in ("store", "corpus", "goldens") or value in (None, False, []):
            continue
        option = "--" + name.replace("_", "-")
        command += (
            [option] if value is True else [option, *map(str, value if isinstance(value, list) else [value])]
        )
    return "\n\n".join(
        [
            "`" + " ".join(command) + "`",
            head,
            leaderboard(result),
            f"Largest standardized coefficients of the saved gate ({result['gateName']}, fitted on every "
            f"question with C = {result['gate'].training['regularizationC']}, the strength its training "
            "folds chose most often; results/gates/learned_gate.json):",
            coefficients(result),
        ]
    )


def write(result: dict[str, Any], out_dir: str | Path, rows: list[dict[str, Any]]) -> dict[str, Path]:
    from nomad_lab.studies.gating.curves import plot_leak_vs_recall
    from nomad_lab.studies.plots import save

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"md": out / "gates.md", "json": out / "gates.json"}
    paths["md"].write_text(markdown(result) + "\n")
    summary = {k: v for k, v in result.items() if k not in ("rows", "gate")}
    summary["rows"] = rows
    paths["json"].write_text(json.dumps(summary, indent=1, default=str) + "\n")
    paths["gate"] = result["gate"].save(out / "learned_gate.json")
    curves = [r.curve for r in result["rows"] if r.curve is not None and len(r.curve.points) > 1]
    figure = plot_leak_vs_recall(
        curves, title="Leak vs recall@5 (learned: out-of-fold scores; transfer: its unseen questions)"
    )
    axes = figure.axes[0]
    axes.axvline(crossval.RECALL_TARGET, color="grey", lw=0.8, ls=":")
    axes.axhline(crossval.LEAK_TARGET, color="grey", lw=0.8, ls=":")
    axes.title.set_fontsize(9)
    paths["png"] = save(figure, out / "gates.png")
    return paths
