"""What ``study answerability`` writes: the out-of-fold rows (fine-tuned vs zero-shot), the refusal tags
that still pass at the chosen point, the cost, and the gate file (JSON + INT8 head) it saves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.eval.gating.fit import figures_json
from nomad_lab.gate import crossval
from nomad_lab.retrieval.answer_cache import save_gate_files
from nomad_lab.retrieval.answer_model import MAX_LENGTH, WINDOW_STRIDE, WINDOW_WORDS

GATE_NAME = "answer-gate.json"
TAG_SKIP = ("off-topic",)
"""Tags every bank-like refusal carries; per-tag rows use the more specific ones."""


def per_tag(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Leak of the fine-tuned gate per refusal tag at the recall-target point, out of fold."""
    data = result["data"]
    refusal = data.pools.expect_refusal
    passed = (result["keep"] & data.base_nonempty[None]).mean(axis=0)
    tags = sorted({t for i in np.flatnonzero(refusal) for t in data.pools.tags[i] if t not in TAG_SKIP})
    out = []
    for tag in tags:
        mask = refusal & np.array([tag in t for t in data.pools.tags], dtype=bool)
        out.append(
            {
                "tag": tag,
                "refusals": int(mask.sum()),
                "retrieving": int((mask & data.base_nonempty).sum()),
                "passed": float(passed[mask].sum()),
                "leak": float(passed[mask].mean()),
            }
        )
    return out


def summary(result: dict[str, Any]) -> dict[str, Any]:
    data = result["data"]
    return {
        "run": result["run"],
        "bankRun": result["bank_run"],
        "fingerprint": data.pools.fingerprint,
        "questions": data.pools.size,
        "refusals": int(data.pools.expect_refusal.sum()),
        "folds": len(result["splits"][0]),
        "repeats": len(result["splits"]),
        "fineTuned": figures_json(result["figures"]),
        "zeroShot": figures_json(result["zero_figures"]),
        "perTag": per_tag(result),
        "threshold": result["threshold"],
        "examples": result["examples"],
        "seconds": result["seconds"],
        "timing": result["timing"],
        "windows": {"words": WINDOW_WORDS, "stride": WINDOW_STRIDE, "maxTokens": MAX_LENGTH},
        "config": vars(result["config"]),
    }


def rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    s = summary(result)
    return [{"row": name, **s[key]} for name, key in (("fine-tuned", "fineTuned"), ("zero-shot", "zeroShot"))]


def _triple(t: list[float] | None, pct: bool = True) -> str:
    if t is None:
        return "not reached"
    f = (lambda v: f"{100 * v:.1f}%") if pct else (lambda v: f"{v:.3f}")
    return f"{f(t[0])} [{f(t[1])}, {f(t[2])}]"


def markdown(result: dict[str, Any]) -> str:
    s = summary(result)
    lines = [
        f"Answerability gate, run {s['run']} ({s['questions']} questions, {s['refusals']} refusals), "
        f"{s['folds']}x{s['repeats']} grouped folds, thresholds chosen inside training folds.",
        "",
        f"| gate | leak at recall@5 >= {crossval.RECALL_TARGET:.2f} [95% CI] | recall@5 there "
        "| ROC AUC [95% CI] | recall target met in training folds |",
        "|---|---|---|---|---|",
    ]
    for name, key in (
        ("answerability (fine-tuned)", "fineTuned"),
        ("ms-marco L12 zero-shot, same windows", "zeroShot"),
    ):
        f = s[key]
        lines.append(
            f"| {name} | {_triple(f['leakAtRecallTarget'])} | {_triple(f['recallAtRecallTarget'], False)} "
            f"| {_triple(f['rocAuc'], False)} | {100 * f['recallTargetReachedInTraining']:.0f}% |"
        )
    lines += [
        "",
        "| refusal tag | refusals | retrieve anything | still pass (out of fold) | leak |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['tag']} | {r['refusals']} | {r['retrieving']} | {r['passed']:.0f} | {100 * r['leak']:.1f}% |"
        for r in s["perTag"]
    ]
    sec, timing = s["seconds"], s["timing"]
    lines += [
        "",
        "| cost | value |",
        "|---|---|",
        f"| ms per question (body over every window + head, uncached) | {timing['msPerQuestion']:.0f} |",
        f"| windows per question (timed sample) | {timing['windowsPerQuestion']:.1f} |",
        f"| pairs read by the ONNX body this run (of {sec['pairs']}) | {sec['readPairs']} |",
        f"| seconds reading them | {sec['read']:.0f} |",
        f"| trainings | {sec['trainings']} |",
        f"| seconds per training (mean) | {sec['trainMean']:.1f} |",
        f"| seconds in all | {sec['total']:.0f} |",
        "",
        "Training examples of the final model: " + ", ".join(f"{k} {v}" for k, v in s["examples"].items()),
    ]
    return "\n".join(lines) + "\n"


def write(result: dict[str, Any], out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    md = out / "answerability.md"
    md.write_text(markdown(result))
    js = out / "answerability.json"
    js.write_text(json.dumps(summary(result), indent=1, default=float) + "\n")
    return {"table": md, "json": js}


def save_gate(result: dict[str, Any], out: Path) -> Path:
    """The final model (fitted on every question) as ``answer-gate.json`` + its INT8 ``answer-gate.npz``."""
    data = result["data"]
    s = summary(result)
    training = {
        "run": s["run"],
        "bankRun": s["bankRun"],
        "fingerprint": s["fingerprint"],
        "questions": s["questions"],
        "questionIds": list(data.pools.ids),
        "examples": s["examples"],
        "config": s["config"],
    }
    return save_gate_files(
        out / GATE_NAME,
        result["head"],
        result["body"],
        result["threshold"],
        data.embedder,
        training,
        s["fineTuned"],
    )
