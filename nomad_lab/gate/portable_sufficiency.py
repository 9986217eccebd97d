"""The sufficiency check made portable: its decision and its action in one JSON, and the check that runs
from it in any Python pipeline (``load(path).decide(question, passages)``).

Why: the assistant's second decision (does a passage state the answer? no: note it in the prompt, or
drop the passages) is worth deploying where the topicality gate goes. The JSON carries what fixes the
decision: the threshold, the unit settings and answer-type weight the check was fitted with, the ms-marco
body's files (checked by SHA-256), the fine-tuned head's tensors (INT8 with their scales, as the gate
file's ``.npz`` stores them; none for ``zero-shot``), the action and the prompt note's exact text, and the
tables the TypeScript port of the unit cutter and the answer-type cues reads (so the bundle's
``sufficiency_check.ts`` holds no copy of them). The score is computed by
:mod:`nomad_lab.gate.unit_reader`, the same functions ``gate apply`` uses.
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.prompts import SUFFICIENCY_ACTIONS, SUFFICIENCY_NOTE, SUFFICIENCY_NOTE_ACTION
from nomad_lab.data import answer_types, sentence_units
from nomad_lab.gate.answer_file import SufficiencyGate
from nomad_lab.gate.portable import SUFFICIENCY_FORMAT
from nomad_lab.gate.unit_reader import (
    HEAD_PARAMS,
    MAX_LENGTH,
    UnitBody,
    best_unit,
    body_model,
    head_logit,
    question_units,
    type_shift,
)

ZERO_SHOT = "zero-shot"


def text_tables() -> dict[str, Any]:
    """The unit cutter's and the answer-type cues' constants and patterns, as data (Python regex syntax:
    the TypeScript port translates ``\\b``, ``\\d``, ``\\s`` to Python's Unicode meaning)."""
    return {**sentence_units.cutter_tables(), **answer_types.cue_tables()}


def head_tensors(weights_path: Path) -> list[dict[str, Any]]:
    """The head's tensors from a gate file's ``.npz``: each 2-D weight as INT8 with its scale, the rest
    as float32, little-endian, base64."""
    out = []
    with np.load(weights_path) as stored:
        for param in HEAD_PARAMS:
            for part in ("weight", "bias"):
                name = f"{param}.{part}"
                if f"{name}.int8" in stored.files:
                    data, scale = stored[f"{name}.int8"].astype("<i1"), float(stored[f"{name}.scale"])
                    out.append({"name": name, "shape": list(data.shape), "dtype": "int8", "scale": scale})
                else:
                    data = stored[name].astype("<f4")
                    out.append({"name": name, "shape": list(data.shape), "dtype": "float32"})
                out[-1]["data"] = base64.b64encode(np.ascontiguousarray(data).tobytes()).decode("ascii")
    return out


def head_weights(tensors: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """The float32 weights of :func:`head_tensors` (an INT8 tensor times its scale, in float32, as
    ``answer_model.dequantized_state`` gives them)."""
    out = {}
    for t in tensors:
        raw = base64.b64decode(t["data"])
        if t["dtype"] == "int8":
            values = np.frombuffer(raw, "<i1").astype(np.float32) * float(t["scale"])
        else:
            values = np.frombuffer(raw, "<f4").astype(np.float32)
        out[t["name"]] = values.reshape(t["shape"])
    return out


def portable_sufficiency(
    target: str,
    threshold: float | None,
    action: str,
    model_files: Sequence[Path],
    digest: str,
) -> dict[str, Any]:
    """The portable form of ``sufficiency:TARGET[@threshold]`` (``zero-shot`` or a gate file) with its
    ``action`` when the check says no; ``model_files``: the body's ``model.onnx`` and ``tokenizer.json``;
    ``digest``: the body digest the gate was trained on (checked here against the file's)."""
    if action not in SUFFICIENCY_ACTIONS:
        raise NomadLabError(f"sufficiency action {action!r}: one of {', '.join(SUFFICIENCY_ACTIONS)}")
    model, tokenizer = (Path(p) for p in model_files)
    gate = None if target == ZERO_SHOT else SufficiencyGate.load(target)
    if gate is not None:
        gate.check_body(digest, f"gate export {target}")
    if threshold is None:
        if gate is None:
            raise NomadLabError("sufficiency:zero-shot has no saved threshold; give one (@T)")
        threshold = gate.threshold
    scoring = (gate.scoring if gate else None) or {}
    top, outputs = body_model(model)[1:]
    return {
        "format": SUFFICIENCY_FORMAT,
        "target": ZERO_SHOT if gate is None else Path(target).name,
        "threshold": float(threshold),
        "action": action,
        "note": SUFFICIENCY_NOTE,
        "units": int(scoring.get("units", sentence_units.CHOSEN)),
        "unitWords": int(scoring.get("unitWords", sentence_units.UNIT_WORDS)),
        "typeWeight": float(scoring.get("typeWeight", 0.0)),
        "embedder": gate.embedder if gate else None,
        "corpusFingerprint": gate.training.get("fingerprint") if gate else None,
        "body": {
            "model": model.name,
            "tokenizer": tokenizer.name,
            "modelDir": str(model.parent.resolve()),
            "sha256": hashlib.sha256(model.read_bytes()).hexdigest(),
            "digest": digest,
            "maxTokens": MAX_LENGTH,
            "topLayer": top,
            "outputs": outputs,
            "heads": int(gate.body["heads"]) if gate else None,
        },
        "head": None if gate is None else head_tensors(gate.weights_path),
        "text": text_tables(),
    }


@dataclass(frozen=True)
class Decision:
    """One question's check: ``stated`` (a unit scores >= the threshold), what the pipeline does with its
    passages (``keep``: False only for the drop action on a no) and the prompt ``note`` (the note action
    on a no; else None); ``score``: the best unit's (NaN: no unit)."""

    stated: bool
    keep: bool
    note: str | None
    score: float


def _text(passage: Any) -> str:
    if isinstance(passage, str):
        return passage
    text = passage.get("text") if isinstance(passage, Mapping) else getattr(passage, "text", None)
    if not isinstance(text, str):
        raise NomadLabError(f"sufficiency check: a passage without text ({type(passage).__name__})")
    return text


class SufficiencyCheck:
    """A portable sufficiency check (:func:`portable_sufficiency`), loaded: the body on first use."""

    def __init__(
        self, data: Mapping[str, Any], model_dir: str | Path | None = None, threads: int | None = None
    ):
        self.data = data
        self.model_dir = Path(str(model_dir or data["body"]["modelDir"]))
        self.threads = threads  # None: UnitBody's default
        self.weights = head_weights(data["head"]) if data.get("head") else None
        self._body: UnitBody | None = None

    @property
    def threshold(self) -> float:
        return float(self.data["threshold"])

    @property
    def body(self) -> UnitBody:
        """The ONNX body, loaded on first use: its file must be the one the export recorded (SHA-256)."""
        if self._body is None:
            spec = self.data["body"]
            model, tokenizer = self.model_dir / spec["model"], self.model_dir / spec["tokenizer"]
            missing = [str(p) for p in (model, tokenizer) if not p.is_file()]
            if missing:
                raise NomadLabError(f"sufficiency check: {', '.join(missing)} missing; pass model_dir=")
            if hashlib.sha256(model.read_bytes()).hexdigest() != spec["sha256"]:
                raise NomadLabError(f"sufficiency check: {model} is not the body the check was exported with")
            graph, _, outputs = body_model(model)
            self._body = UnitBody(graph.SerializeToString(), outputs, tokenizer, self.threads)
        return self._body

    def units(self, question: str, passages: Sequence[Any]) -> list[str]:
        """The units the check reads of ``passages`` (texts, or mappings/objects with ``text``)."""
        d = self.data
        return question_units(question, [_text(p) for p in passages], int(d["units"]), int(d["unitWords"]))

    def score(self, question: str, passages: Sequence[Any]) -> float:
        """The best unit's score (NaN: no unit), as ``gate apply`` computes it."""
        units = self.units(question, passages)
        if not units:
            return math.nan
        readings = self.body.read([(question, u) for u in units])
        if self.weights is None:
            logits = [r.logit for r in readings]
        else:
            heads = int(self.data["body"]["heads"])
            logits = [head_logit(self.weights, heads, r.k, r.v, r.h) for r in readings]
        return best_unit(logits, type_shift(question, units), float(self.data["typeWeight"]))

    def decide(self, question: str, passages: Sequence[Any]) -> Decision:
        """Whether a passage states the answer, and what the pipeline then does (the export's action)."""
        value = self.score(question, passages)
        stated = not math.isnan(value) and value >= self.threshold
        note = self.data["action"] == SUFFICIENCY_NOTE_ACTION
        return Decision(stated, stated or note, None if stated or not note else str(self.data["note"]), value)

    def keep(self, question: str, passages: Sequence[Any], query_vector: Any = None) -> bool:
        """Whether the passages stay in the prompt (with the note action, always; the note is
        :meth:`decide`'s). ``query_vector`` is unused: the runtime's gate signature."""
        return self.decide(question, passages).keep
