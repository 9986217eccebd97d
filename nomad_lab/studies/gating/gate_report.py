"""The gate leaderboard as a markdown table, a JSON file, the figure of each family's best
(:mod:`~nomad_lab.studies.gating.family_plot`), and the fitted gate file (what ``study gates`` writes
under ``results/gates/``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR, DEFAULT_STORE_PATH, PROJECT_ROOT
from nomad_lab.gate import crossval
from nomad_lab.studies.gating.family_plot import FamilyCurve, plot_gate_families

DEFAULT_PATHS = {"corpus": DEFAULT_CORPUS_DIR, "goldens": DEFAULT_GOLDENS_DIR, "store": DEFAULT_STORE_PATH}
"""Path parameters named on the table's command line only when they differ from these defaults."""


def _triple(t: tuple[float, float, float] | None, pct: bool = True) -> str:
    if t is None:
        return "not reached"
    f = (lambda v: f"{100 * v:.1f}%") if pct else (lambda v: f"{v:.3f}")
    return f"{f(t[0])} [{f(t[1])}, {f(t[2])}]"


def leaderboard(result: dict[str, Any]) -> str:
    target = f"{crossval.RECALL_TARGET:.2f}"
    lines = [
        f"| gate | leak at its recall@5 >= {target} point [95% CI] | out-of-fold recall@5 there [95% CI] "
        f"| on its curve at recall@5 >= {target}: leak (recall) "
        f"| recall@5 at leak <= {100 * crossval.LEAK_TARGET:.0f}% [95% CI] | ROC AUC [95% CI] "
        "| model calls / question | ms / question | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        f = row.figures
        if f is None:
            lines.append(f"| {row.name} | - | - | - | - | - | - | - | {row.note} |")
            continue
        note = row.note
        if f.reached < 1:
            note = (
                note + "; " if note else ""
            ) + f"recall target met in {100 * f.reached:.0f}% of training folds"
        curve = "-" if row.at_target is None else f"{100 * row.at_target[0]:.1f}% ({row.at_target[1]:.3f})"
        lines.append(
            f"| {row.name} | {_triple(f.leak_at_recall)} | {_triple(f.recall_at_recall, False)} | {curve} "
            f"| {_triple(f.recall_at_leak, False)} | {_triple(f.auc, False)} "
            f"| {row.calls:.2f} | {'-' if row.ms != row.ms else f'{row.ms:.3f}'} | {note} |"
        )
    return "\n".join(lines)


def comparison(result: dict[str, Any]) -> str:
    """The best row against the floor, paired, and which refusal tags the best row still lets through."""
    test = result.get("bestVsFloor")
    if not test:
        return "No out-of-fold row to compare with the floor."
    leak, mc, rec = test["leak"], test["leakMcNemar"], test["recall"]
    verdict = "significantly lower" if test["significant"] else "not significantly lower"
    lines = [
        f"Best row at its recall point: **{test['best']}**, against **{test['baseline']}**, paired over the "
        f"same {leak['n']} refusals: leak difference {100 * leak['difference']:+.1f} points "
        f"[{100 * leak['low']:+.1f}, {100 * leak['high']:+.1f}] ({leak['method']}, p {leak['p']:.3g}; "
        f"{mc['method']}: p {mc['p']:.3g}): {verdict}. Recall@5 difference over {rec['n']} answerable "
        f"questions {rec['difference']:+.3f} [{rec['low']:+.3f}, {rec['high']:+.3f}] (p {rec['p']:.3g}).",
        "",
        "| refusal tag | refusals | leaked (repeat-averaged) | leak |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {t['tag']} | {t['refusals']} | {t['leaked']:.1f} | {100 * t['leak']:.1f}% |"
        for t in result["bestByTag"]
    ]
    return "\n".join(lines)


def coefficients(result: dict[str, Any]) -> str:
    lines = ["| feature (standardized) | coefficient |", "|---|---|"]
    lines += [f"| {r['feature']} | {r['coef']:+.3f} |" for r in result["coefficients"]]
    return "\n".join(lines)


def _shown(path: str | Path) -> str:
    """A path as a reader in the project root types it (relative when it is under the root)."""
    resolved = Path(path).resolve()
    return str(resolved.relative_to(PROJECT_ROOT)) if resolved.is_relative_to(PROJECT_ROOT) else str(path)


def command_line(result: dict[str, Any], out: str | Path | None = None) -> str:
    """The ``nomad-lab study gates`` line that made ``result``: every option that differs from its
    default, paths relative to the project root, so the command reruns the table on the same corpus."""
    command = ["nomad-lab", "study", "gates"]
    for name, value in result["params"].items():
        default = DEFAULT_PATHS.get(name)
        empty = value in (None, False) or (isinstance(value, list | tuple) and not value)
        if empty or (default is not None and Path(value).resolve() == default.resolve()):
            continue
        if default is not None:
            value = _shown(value)
        values = list(value) if isinstance(value, list | tuple) else [value]
        command += ["--" + name.replace("_", "-"), *([] if value is True else map(str, values))]
    return " ".join(command + (["--out", _shown(out)] if out is not None else []))


def markdown(result: dict[str, Any], out: str | Path | None = None) -> str:
    """The leaderboard page: its command, what the run holds, the table and the saved gate's coefficients
    (``out``: the directory the files go to, named on the command line and as the gate file's place)."""
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
    gate_file = "learned_gate.json" if out is None else _shown(Path(out) / "learned_gate.json")
    return "\n\n".join(
        [
            "`" + command_line(result, out) + "`",
            head,
            leaderboard(result),
            comparison(result),
            f"Largest standardized coefficients of the saved gate ({result['gateName']}: the mean of its "
            f"fold models, C = {result['gate'].training['regularizationC']}, the strength its training "
            f"folds chose most often; {gate_file}):",
            coefficients(result),
        ]
    )


def write(result: dict[str, Any], out_dir: str | Path, rows: list[dict[str, Any]]) -> dict[str, Path]:
    from nomad_lab.studies.plots import save  # heavy

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"md": out / "gates.md", "json": out / "gates.json"}
    paths["md"].write_text(markdown(result, out) + "\n")
    summary = {k: v for k, v in result.items() if k not in ("rows", "gate")}
    summary["rows"] = rows
    by_name = {r["gate"]: r for r in rows}
    summary["bestRow"] = by_name.get(result.get("best"))  # pages cite the best row by this key
    summary["floorRow"] = rows[0]
    paths["json"].write_text(json.dumps(summary, indent=1, default=str) + "\n")
    paths["gate"] = result["gate"].save(out / "learned_gate.json")
    curves = [
        FamilyCurve(
            family_of(r),
            r.name,
            r.curve,
            r.figures.leak_at_recall[0] if r.figures and r.figures.leak_at_recall else None,
        )
        for r in result["rows"]
        if r.curve is not None and len(r.curve.points) > 1 and r.family != "sample"  # other questions
    ]
    figure = plot_gate_families(
        curves,
        recall_target=crossval.RECALL_TARGET,
        leak_target=crossval.LEAK_TARGET,
        title="Each gate family's best against the floor (learned: out of fold)",
    )
    paths["png"] = save(figure, out / "gates.png")
    return paths


def family_of(row: Any) -> str:
    """A row's gate family: its ``family`` when it has one, else the first word of its name
    (``learned: pool only`` -> ``learned``, ``floor@0.62 ...`` -> ``floor``)."""
    return getattr(row, "family", None) or re.split(r"[\s:@(]", row.name, maxsplit=1)[0]
