"""An answerability gate file: a JSON record (threshold, training run, fingerprint, out-of-fold figures)
beside the ``.npz`` of its fine-tuned head, quantized to INT8.

Why a record of its own beside :class:`nomad_lab.gate.logistic_gate.LearnedGate`: this gate's number comes
from a model that reads the passages (the ONNX body named by its digest plus the stored head), not
from a dot product over features, so the file must also pin the body it was trained on. Like learned
gates it is valid only where it was fitted: another embedder, another index fingerprint or another
ONNX body is refused in one line, since its threshold was chosen on that run's pools.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate.gate_file import read_gate_file, write_gate_file
from nomad_lab.gate.logistic_gate import describe, same_embedder

FORMAT = "nomad-lab answerability gate v1"


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class AnswerGate:
    """A fitted answerability gate: keep a question's passages when its best window logit >= threshold."""

    threshold: float
    weights: str  # the .npz file name, beside the JSON
    weights_sha256: str
    body: dict[str, Any]  # digest, top layer, heads, max_length, window, stride
    embedder: dict[str, Any] | None
    training: dict[str, Any] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    FORMAT: ClassVar[str] = FORMAT
    LABEL: ClassVar[str] = "answerability gate"
    STUDY: ClassVar[str] = "answerability"

    @property
    def weights_path(self) -> Path:
        return Path(self.path).with_name(self.weights)

    def check_run(self, identity: Mapping[str, Any] | None, fingerprint: str | None, where: str) -> None:
        """Refuse a run from another embedder or index than the one the gate was fitted on."""
        if not same_embedder(self.embedder, identity):
            raise NomadLabError(
                f"{where}: the {self.LABEL} was fitted on {describe(self.embedder)} pools, these come "
                f"from {describe(identity)}; fit one on this run (nomad-lab study {self.STUDY} --run RUN)"
            )
        trained = self.training.get("fingerprint")
        if trained and fingerprint != trained:
            raise NomadLabError(
                f"{where}: the {self.LABEL} was fitted on index {trained}, this run's index is "
                f"{fingerprint}; fit one on this run (nomad-lab study {self.STUDY} --run RUN)"
            )

    def check_body(self, digest: str, where: str, reading: str | None = None) -> None:
        """Refuse another ONNX body; warn (one line) when the head was trained on another ``reading`` of
        it (the body cache's version: readings before ``answer-pair-v2`` were batched, so a batch-mate
        moved a pair's outputs, and the threshold chosen on them may not hold on this reading)."""
        if digest != self.body.get("digest"):
            raise NomadLabError(
                f"{where}: the gate's head was trained on ONNX body {self.body.get('digest')}, "
                f"the installed one is {digest}; refit it"
            )
        trained = self.body.get("reading", "answer-pair-v1")
        if reading is not None and trained != reading:
            warnings.warn(
                f"{where}: the {self.LABEL} was fitted on body readings {trained}, this workbench reads "
                f"{reading}; its threshold may not hold: refit it (nomad-lab study {self.STUDY} --run RUN)",
                stacklevel=2,
            )

    def save(self, path: str | Path) -> Path:
        return write_gate_file(path, self.FORMAT, {k: v for k, v in asdict(self).items() if k != "path"})

    @classmethod
    def load(cls, path: str | Path) -> Any:
        """Read a gate file; a missing, foreign or incomplete file, or weights that changed, is one line."""
        where = str(path)
        gate = read_gate_file(
            path,
            cls.FORMAT,
            lambda **fields: cls(**fields, path=str(path)),
            f"{cls.LABEL} file",
            f"an {cls.LABEL} file" if cls.LABEL[0] in "aeiou" else f"a {cls.LABEL} file",
        )
        if not gate.weights_path.is_file():
            raise NomadLabError(f"{where}: its weights {gate.weights_path} are missing")
        if file_sha256(gate.weights_path) != gate.weights_sha256:
            raise NomadLabError(f"{where}: {gate.weights_path} does not match the sha256 the file records")
        return gate


@dataclass(frozen=True)
class SufficiencyGate(AnswerGate):
    """A fitted sufficiency check (``nomad-lab study sufficiency``): the containment head (INT8 ``.npz``)
    beside ``scoring``, the unit settings it was trained with (``units`` read per question,
    ``unitWords``) and the answer-type weight (``typeWeight``), and the threshold chosen for answerable
    keep >= the target. Checked against run and body like an answerability gate."""

    scoring: dict[str, Any] = field(default_factory=dict)
    FORMAT: ClassVar[str] = "nomad-lab sufficiency gate v1"
    LABEL: ClassVar[str] = "sufficiency gate"
    STUDY: ClassVar[str] = "sufficiency"
