"""The Python side of a cross-encoder gate's deploy: ``gate export --to json`` of the published
``learned: pool + ce + bank`` gate, loaded by :mod:`nomad_lab.gate.runtime` (which runs the cross-encoder
itself through onnxruntime) scores the sample questions of both corpora as ``gate apply`` does (within
1e-9), and inside the LangChain compressor and the LlamaIndex postprocessor keeps exactly the ones it keeps
(three of each decision per corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate.runtime import load
from tests.gate_export.bundle_runs import export_best
from tests.gate_export.conftest import CORPORA, Fitted, adapters_keep, applied

pytestmark = pytest.mark.slow
ADAPTED = 3
"""Questions of each decision the adapters are run on (the runtime scores every sample question; the
adapters' gates get its cross-encoder scores for the same top sets: ``cross_encoder_reused``)."""


def portable(run: Fitted, out: Path) -> Path:
    return export_best(run, "json", "--out", str(out))


@pytest.mark.parametrize("corpus", list(CORPORA))
def test_the_runtime_and_both_adapters_apply_the_cross_encoder_gate_as_gate_apply(
    ce_runs: dict[str, Fitted], corpus: str, tmp_path: Path, cross_encoder_reused: dict
) -> None:
    from nomad_lab.frameworks.langchain import gate_compressor
    from nomad_lab.frameworks.llamaindex import gate_postprocessor

    run = ce_runs[corpus]
    python = applied(run, "pool,ce")
    path = portable(run, tmp_path / "gate.json")
    gate, compressor, postprocessor = load(path), gate_compressor(path), gate_postprocessor(path)
    decided = {True: 0, False: 0}
    for q in run.questions:
        expected = python["scores"][q["id"]]
        keep = expected >= python["threshold"]
        assert abs(gate.score(q["question"], q["passages"]) - expected) <= 1e-9, q["id"]
        if decided[keep] >= ADAPTED:
            continue  # each adapter runs the cross-encoder again: a few of each decision are enough
        assert adapters_keep(compressor, postprocessor, q) == (keep, keep), q["id"]
        decided[keep] += 1
    assert decided == {True: ADAPTED, False: ADAPTED}
    # the adapters asked the cross-encoder for no top set but the runtime's (a question's pool is its text's)
    assert len(cross_encoder_reused) == len({q["question"] for q in run.questions})


def test_a_model_folder_that_is_not_the_gates_is_one_line(ce_runs: dict[str, Fitted], tmp_path: Path) -> None:
    run = ce_runs["default"]
    path = portable(run, tmp_path / "gate.json")
    (tmp_path / "model").mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        (tmp_path / "model" / name).write_text("not the model")
    q = run.questions[0]
    with pytest.raises(NomadLabError, match=r"not the ones the gate was fitted with") as err:
        load(path, model_dir=tmp_path / "model").keep(q["question"], q["passages"])
    assert "\n" not in str(err.value)
    with pytest.raises(NomadLabError, match=r"missing; pass model_dir="):
        load(path, model_dir=tmp_path / "nowhere").keep(q["question"], q["passages"])


def test_the_runtime_cross_encoder_runs_on_the_threads_nomad_lab_threads_gives(
    ce_runs: dict[str, Fitted], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two test workers (or a study beside a server) on two cores set NOMAD_LAB_THREADS=1: the runtime's
    onnxruntime session must take it, not spin two threads each."""
    path = portable(ce_runs["default"], tmp_path / "gate.json")
    for threads in ("1", "3"):
        monkeypatch.setenv("NOMAD_LAB_THREADS", threads)
        session = load(path).cross_encoder.runner.session
        assert session.get_session_options().intra_op_num_threads == int(threads)
