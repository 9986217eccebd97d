"""The gate leaderboard as a value (:func:`report`): a markdown table, a JSON document, the figure of each
family's best (:mod:`~nomad_lab.studies.gating.family_plot`), the fitted gate file and the decisions log,
which the publish ring writes under ``results/gates/``."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR, DEFAULT_STORE_PATH, PROJECT_ROOT
from nomad_lab.data.refusal_kinds import KINDS, OFF_TOPIC, REFUSAL_KINDS
from nomad_lab.gate import crossval
from nomad_lab.gate.decisions import row_decisions, write_decisions
from nomad_lab.studies.gating.family_plot import RowPoint, plot_by_kind
from nomad_lab.studies.result import Artefact, Figure, Page, Result, escape

KIND_COLUMNS = {name: kind.label for name, kind in KINDS.items()}
"""Each refusal kind's column head, from its record: a leak for off-topic refusals (their context should
never reach the prompt), a pass rate for the on-topic kinds (a topicality gate is right to pass them)."""
KIND_AXES = {name: kind.axis for name, kind in KINDS.items()}

DEFAULT_PATHS = {"corpus": DEFAULT_CORPUS_DIR, "goldens": DEFAULT_GOLDENS_DIR, "store": DEFAULT_STORE_PATH}
"""Path parameters named on the table's command line only when they differ from these defaults."""


def _triple(t: tuple[float, float, float] | None, pct: bool = True) -> str:
    if t is None:
        return "not reached"
    f = (lambda v: f"{100 * v:.1f}%") if pct else (lambda v: f"{v:.3f}")
    return f"{f(t[0])} [{f(t[1])}, {f(t[2])}]"


def _kind_cell(row_json: dict[str, Any], kind: str) -> str:
    value = row_json.get("byKind", {}).get(kind)
    return "-" if value is None else _triple(value["passAtRecallTarget"])


def leaderboard(result: dict[str, Any], rows_json: list[dict[str, Any]]) -> str:
    """One line per row: at its training-chosen recall@5 >= target point, the recall it reaches out of
    fold and, side by side, the off-topic leak (the headline) and the other kinds' pass rates."""
    target = f"{crossval.RECALL_TARGET:.2f}"
    n = result["refusalsByKind"]
    kinds = [k for k in REFUSAL_KINDS if n.get(k)]
    head = " | ".join(f"{KIND_COLUMNS[k]} (n = {n[k]}) [95% CI]" for k in kinds)
    lines = [
        f"| gate | out-of-fold recall@5 at its recall@5 >= {target} point [95% CI] | {head} "
        "| ROC AUC, answerable vs off-topic [95% CI] | model calls / question | ms / question | note |",
        "|---|---|" + "---|" * len(kinds) + "---|---|---|---|",
    ]
    for row, js in zip(result["rows"], rows_json, strict=True):
        f = row.figures
        if f is None:
            lines.append(
                f"| {escape(row.name)} | - | " + "- | " * len(kinds) + f"- | - | - | {escape(row.note)} |"
            )
            continue
        note = row.note
        if f.reached < 1:
            note = (
                note + "; " if note else ""
            ) + f"recall target met in {100 * f.reached:.0f}% of training folds"
        auc = js.get("byKind", {}).get(OFF_TOPIC, {}).get("rocAuc")
        cells = " | ".join(_kind_cell(js, k) for k in kinds)
        lines.append(
            f"| {escape(row.name)} | {_triple(f.recall_at_recall, False)} | {cells} "
            f"| {_triple(tuple(auc), False) if auc else '-'} "
            f"| {row.calls:.2f} | {'-' if row.ms != row.ms else f'{row.ms:.3f}'} | {escape(note)} |"
        )
    return "\n".join(lines)


def comparison(result: dict[str, Any]) -> str:
    """The best row against the floor, paired, per refusal kind; which refusal tags it still lets
    through, by kind."""
    tests = result.get("bestVsFloor")
    if not tests:
        return "No out-of-fold row to compare with the floor."
    first = next(iter(tests.values()))
    rec = first["recall"]
    lines = [
        f"Best row at its recall point on the headline (off-topic leak): **{first['best']}**, against "
        f"**{first['baseline']}**, paired over the same refusals of each kind. Recall@5 difference over "
        f"{rec['n']} answerable questions {rec['difference']:+.3f} [{rec['low']:+.3f}, {rec['high']:+.3f}] "
        f"(p {rec['p']:.3g}).",
        "",
        "| refusal kind | refusals | pass-rate difference, best - floor [95% CI] | paired bootstrap p "
        "| exact McNemar p | lower? |",
        "|---|---|---|---|---|---|",
    ]
    for kind, test in tests.items():
        leak, mc = test["leak"], test["leakMcNemar"]
        lower = "significantly" if test["significant"] else "not significantly"
        lines.append(
            f"| {kind} | {leak['n']} | {100 * leak['difference']:+.1f} points [{100 * leak['low']:+.1f}, "
            f"{100 * leak['high']:+.1f}] | {leak['p']:.4f} | {mc['p']:.4f} | {lower} |"
        )
    lines += [
        "",
        "Refusals the best row still lets through, by kind and tag (repeat-averaged):",
        "",
        "| refusal kind | tag | refusals | passed (repeat-averaged) | pass rate |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {t['kind']} | {t['tag']} | {t['refusals']} | {t['leaked']:.1f} | {100 * t['leak']:.1f}% |"
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


def markdown(result: dict[str, Any], out: str | Path | None, rows_json: list[dict[str, Any]]) -> str:
    """The leaderboard page: its command, what the run holds, the table and the saved gate's coefficients
    (``out``: the directory the files go to, named on the command line and as the gate file's place)."""
    bank = result["bank"]
    n = result["refusalsByKind"]
    head = (
        f"Run {result['run']}: {result['questions']} questions ({result['answerable']} answerable with a "
        f"relevant document, {result['refusals']} refusals: "
        + ", ".join(f"{n[k]} {k}" for k in REFUSAL_KINDS if n.get(k))
        + f"), recall@5 with no gate "
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
            leaderboard(result, rows_json),
            comparison(result),
            f"Largest standardized coefficients of the saved gate ({result['gateName']}: the mean of its "
            f"fold models, C = {result['gate'].training['regularizationC']}, the strength its training "
            f"folds chose most often; {gate_file}):",
            coefficients(result),
        ]
    )


def report(result: dict[str, Any], rows: list[dict[str, Any]]) -> Result:
    """The leaderboard as a value: ``gates.json`` (the run's summary with its rows, the best rows by
    key: pages cite them), ``gates.md``, ``gates.png``, the saved gate ``learned_gate.json`` and every
    row's per-question ``decisions.csv.gz`` (each saved by its own format's writer); the publish ring
    writes them into ``result["out"]``, the folder the page names."""
    out = result.get("out")
    summary = {k: v for k, v in result.items() if k not in ("rows", "gate", "ids", "kinds", "out")}
    summary["rows"] = rows
    by_name = {r["gate"]: r for r in rows}
    summary["bestRow"] = by_name.get(result.get("best"))  # pages cite the best row by this key
    summary["bestWithoutModelCallRow"] = by_name.get(result.get("bestWithoutModelCall"))
    summary["floorRow"] = rows[0]
    page = Page("gates.md", (markdown(result, out, rows),))
    saved = (
        Artefact("learned_gate.json", result["gate"].save),
        Artefact("decisions.csv.gz", partial(_save_decisions, result)),
    )
    drawn = (Figure("gates.png", partial(figure, result, rows)),)
    return Result("gates", result, {"gates.json": summary}, (page,), drawn, artefacts=saved)


def figure(result: dict[str, Any], rows: list[dict[str, Any]]) -> Any:
    """Each scored row at its out-of-fold operating point, one panel per refusal kind."""
    points = [
        RowPoint(
            family_of(r),
            r.name,
            r.figures.recall_at_recall,
            {k: _as_triple(v["passAtRecallTarget"]) for k, v in js["byKind"].items()},
        )
        for r, js in zip(result["rows"], rows, strict=True)
        if r.figures is not None and r.family != "sample"  # a sample row is scored on other questions
    ]
    n = result["refusalsByKind"]
    return plot_by_kind(
        points,
        [(k, KIND_AXES[k], n[k]) for k in REFUSAL_KINDS if n.get(k)],
        recall_target=crossval.RECALL_TARGET,
        leak_target=crossval.LEAK_TARGET,
        title="Each row at its out-of-fold operating point, one panel per refusal kind",
    )


def _save_decisions(result: dict[str, Any], path: Path) -> Path:
    return write_decisions(path, _decisions(result))


def _as_triple(value: list[float] | None) -> tuple[float, float, float] | None:
    return None if value is None else (value[0], value[1], value[2])


def _decisions(result: dict[str, Any]):
    """Every scored row's per-question decisions (the rows on a subset name only their questions)."""
    ids, kinds = np.array(result["ids"], dtype=object), np.array(result["kinds"], dtype=object)
    for row in result["rows"]:
        if row.figures is not None:
            yield from row_decisions(row.name, row.figures.extra, row.covers(ids), row.covers(kinds))


def family_of(row: Any) -> str:
    """A row's gate family: its ``family`` when it has one, else the first word of its name
    (``learned: pool only`` -> ``learned``, ``floor@0.62 ...`` -> ``floor``)."""
    return getattr(row, "family", None) or re.split(r"[\s:@(]", row.name, maxsplit=1)[0]
