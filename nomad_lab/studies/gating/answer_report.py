"""What ``study answerability`` publishes, as a value: the out-of-fold rows (fine-tuned vs zero-shot), the
refusal tags that still pass at the chosen point, the cost, and the gate file (JSON + INT8 head) it
saves. Its page is built from the stored summary alone, so ``answerability.md`` can be rebuilt from
``answerability.json``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.eval.gating.fit import figures_json
from nomad_lab.gate import crossval
from nomad_lab.retrieval.answer_cache import save_gate_files
from nomad_lab.retrieval.answer_model import MAX_LENGTH, WINDOW_STRIDE, WINDOW_WORDS
from nomad_lab.studies.result import Field, Page, Table, Value, listing

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


def training_costs(sec: dict[str, Any]) -> list[tuple[str, Value]]:
    """The cost rows a fine-tuned check shares with the sufficiency study: pairs read, trainings, time."""
    return [
        (f"pairs read by the ONNX body this run (of {sec['pairs']})", Value(sec["readPairs"], "count")),
        ("seconds reading them", Value(sec["read"], "s", ".0f")),
        ("trainings", Value(sec["trainings"], "count")),
        ("seconds per training (mean)", Value(sec["trainMean"], "s", ".1f")),
        ("seconds in all", Value(sec["total"], "s", ".0f")),
    ]


def training_record(s: Mapping[str, Any], question_ids: Sequence[str], **runs: str) -> dict[str, Any]:
    """What a saved gate file says it was fitted on, shared with the sufficiency gate: the run (``runs``:
    any further runs, such as the bank's), the index fingerprint a gather checks, the questions and the
    final model's examples and settings."""
    return {
        "run": s["run"],
        **runs,
        "fingerprint": s["fingerprint"],
        "questions": s["questions"],
        "questionIds": list(question_ids),
        "examples": s["examples"],
        "config": s["config"],
    }


def examples_line(s: dict[str, Any]) -> str:
    return "Training examples of the final model: " + ", ".join(f"{k} {v}" for k, v in s["examples"].items())


GATE_FIELDS = (
    Field("gate", "gate"),
    Field(
        "leakAtRecallTarget",
        f"leak at recall@5 >= {crossval.RECALL_TARGET:.2f} [95% CI]",
        "share",
        ".1f",
        100,
        "%",
        absent="not reached",
    ),
    Field("recallAtRecallTarget", "recall@5 there", "share", ".3f", absent="not reached"),
    Field("rocAuc", "ROC AUC [95% CI]", "", ".3f", absent="not reached"),
    Field("recallTargetReachedInTraining", "recall target met in training folds", "share", ".0f", 100, "%"),
)
TAG_FIELDS = (
    Field("tag", "refusal tag"),
    Field("refusals", "refusals", "count"),
    Field("retrieving", "retrieve anything", "count"),
    Field("passed", "still pass (out of fold)", "count", ".0f"),
    Field("leak", "leak", "share", ".1f", 100, "%"),
)


def pages(s: Mapping[str, Any]) -> tuple[Page, ...]:
    """``answerability.md`` from the stored summary alone (so it can be rebuilt from the JSON)."""
    gates = (
        {"gate": "answerability (fine-tuned)", **s["fineTuned"]},
        {"gate": "ms-marco L12 zero-shot, same windows", **s["zeroShot"]},
    )
    timing = s["timing"]
    costs = [
        (
            "ms per question (body over every window + head, uncached)",
            Value(timing["msPerQuestion"], "ms", ".0f"),
        ),
        ("windows per question (timed sample)", Value(timing["windowsPerQuestion"], "count", ".1f")),
        *training_costs(s["seconds"]),
    ]
    return (
        Page(
            "answerability.md",
            (
                f"Answerability gate, run {s['run']} ({s['questions']} questions, {s['refusals']} refusals), "
                f"{s['folds']}x{s['repeats']} grouped folds, thresholds chosen inside training folds.",
                Table("gates", GATE_FIELDS, gates),
                Table("per-tag", TAG_FIELDS, tuple(s["perTag"])),
                listing("cost", ("cost", "value"), costs),
                examples_line(s),
            ),
        ),
    )


def save_gate(result: dict[str, Any], path: Path) -> Path:
    """The final model (fitted on every question) as ``answer-gate.json`` + its INT8 ``answer-gate.npz``
    (``path`` names the JSON)."""
    data = result["data"]
    s = summary(result)
    training = training_record(s, data.pools.ids, bankRun=s["bankRun"])
    return save_gate_files(
        path,
        result["head"],
        result["body"],
        result["threshold"],
        data.embedder,
        training,
        s["fineTuned"],
    )
