"""The answerability gate file: saved and read back, and refused for another run, body or changed weights."""

import numpy as np
import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate.answer_file import AnswerGate, SufficiencyGate, file_sha256

EMBEDDER = {"model": "minilm", "version": "1", "method": "mean", "dimension": 384}


def saved(tmp_path):
    weights = tmp_path / "g.npz"
    np.savez(weights, a=np.zeros(3))
    gate = AnswerGate(
        threshold=-1.5,
        weights=weights.name,
        weights_sha256=file_sha256(weights),
        body={"digest": "abc"},
        embedder=EMBEDDER,
        training={"fingerprint": "fp1", "run": "r1"},
    )
    return gate.save(tmp_path / "g.json")


def test_a_saved_gate_reads_back_and_accepts_its_own_run(tmp_path):
    gate = AnswerGate.load(saved(tmp_path))
    assert gate.threshold == -1.5 and gate.weights_path == tmp_path / "g.npz"
    gate.check_run(dict(EMBEDDER), "fp1", "here")
    gate.check_body("abc", "here")


def test_another_embedder_index_or_body_is_refused_in_one_line(tmp_path):
    gate = AnswerGate.load(saved(tmp_path))
    with pytest.raises(NomadLabError, match="fitted on minilm"):
        gate.check_run({**EMBEDDER, "model": "other"}, "fp1", "run x")
    with pytest.raises(NomadLabError, match="index fp1, this run's index is fp2"):
        gate.check_run(dict(EMBEDDER), "fp2", "run x")
    with pytest.raises(NomadLabError, match="ONNX body abc"):
        gate.check_body("zzz", "run x")


def test_a_head_trained_on_another_reading_of_the_body_is_a_warning_naming_the_refit(tmp_path, recwarn):
    gate = AnswerGate.load(saved(tmp_path))  # no "reading": a file from before the per-pair reading
    gate.check_body("abc", "gate apply", "answer-pair-v2")
    (warned,) = recwarn.list
    text = str(warned.message)
    assert "fitted on body readings answer-pair-v1, this workbench reads answer-pair-v2" in text
    assert "nomad-lab study answerability --run RUN" in text
    recwarn.clear()
    current = AnswerGate(**{**gate.__dict__, "body": {"digest": "abc", "reading": "answer-pair-v2"}})
    current.check_body("abc", "gate apply", "answer-pair-v2")
    assert recwarn.list == []


def test_changed_weights_or_a_foreign_file_are_refused(tmp_path):
    path = saved(tmp_path)
    np.savez(tmp_path / "g.npz", a=np.ones(3))
    with pytest.raises(NomadLabError, match="does not match the sha256"):
        AnswerGate.load(path)
    (tmp_path / "x.json").write_text('{"format": "other"}')
    with pytest.raises(NomadLabError, match="not an answerability gate file"):
        AnswerGate.load(tmp_path / "x.json")


def test_a_sufficiency_gate_keeps_its_scoring_and_is_not_read_as_another_kind(tmp_path):
    weights = tmp_path / "s.npz"
    np.savez(weights, a=np.zeros(3))
    path = SufficiencyGate(
        threshold=0.25,
        weights=weights.name,
        weights_sha256=file_sha256(weights),
        body={"digest": "abc"},
        embedder=EMBEDDER,
        scoring={"units": 8, "unitWords": 80, "typeWeight": 1.0},
    ).save(tmp_path / "s.json")
    gate = SufficiencyGate.load(path)
    assert (gate.threshold, gate.scoring["typeWeight"]) == (0.25, 1.0)
    with pytest.raises(NomadLabError, match="not an answerability gate file"):
        AnswerGate.load(path)
    with pytest.raises(NomadLabError, match="not a sufficiency gate file"):
        SufficiencyGate.load(saved(tmp_path))
    with pytest.raises(NomadLabError, match="nomad-lab study sufficiency --run RUN"):
        gate.check_run({**EMBEDDER, "model": "other"}, None, "run x")
