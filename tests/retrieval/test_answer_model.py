"""The answerability model on the real offline ms-marco L12 ONNX: the dequantized head reproduces the
INT8 model, a training step moves a planted example the way its label says, the cache resumes."""

import numpy as np
import pytest

from nomad_lab.core.errors import NomadLabError

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("torch")

from nomad_lab.retrieval import answer_model as am
from nomad_lab.retrieval.answer_cache import BodyCache

ANSWER = "Cool a burn under cool running water for 20 minutes. Do not put ice or butter on it."
PAIRS = [
    ("How long should I cool a burn?", ANSWER),
    ("How long should I cool a burn?", "The phonetic alphabet says Alpha, Bravo, Charlie for A, B, C."),
    ("What is the price of burn gel?", ANSWER),
]


@pytest.fixture(scope="module")
def body():
    try:
        am.default_model_dir()
    except NomadLabError as exc:
        pytest.skip(str(exc))
    return am.AnswerBody(threads=1)


def test_the_dequantized_head_reproduces_the_int8_model(body):
    outs, onnx_logits = body.read(PAIRS)
    head = am.make_head(body.weights, body.heads)
    ours = am.head_logits(head, outs)
    assert np.allclose(ours, onnx_logits, atol=0.5), (ours, onnx_logits)
    assert onnx_logits[0] > onnx_logits[1]  # the model ranks the answering passage first


def test_a_training_step_moves_a_planted_negative_down(body):
    outs, _ = body.read(PAIRS)
    before = am.head_logits(am.make_head(body.weights, body.heads), outs)
    labels = np.array([1, 0, 0])
    config = am.TrainConfig(epochs=2, batch=3, lr=1e-3)
    head = am.train_head(body.weights, body.heads, outs * 2, np.tile(labels, 2), config)
    after = am.head_logits(head, outs)
    assert after[2] - after[0] < before[2] - before[0]  # the swapped question falls behind the answer


def test_int8_storage_round_trips_close_to_the_float_head(body):
    head = am.make_head(body.weights, body.heads)
    restored = am.make_head(am.dequantized_state(am.quantized_state(head)), body.heads)
    outs, _ = body.read(PAIRS[:2])
    assert np.allclose(am.head_logits(head, outs), am.head_logits(restored, outs), atol=0.3)


def test_the_cache_reads_what_it_wrote_and_computes_nothing_twice(body, tmp_path):
    cache = BodyCache(tmp_path, body)
    first, logits = cache.read(PAIRS)
    assert cache.computed == 3
    again = BodyCache(tmp_path, body)
    second, logits2 = again.read(PAIRS)
    assert again.computed == 0
    assert np.allclose(np.asarray(first[0].k, float), np.asarray(second[0].k, float))
    assert np.allclose(logits, logits2)


def test_windows_cover_a_long_passage_and_keep_a_short_one_whole():
    words = [f"w{i}" for i in range(400)]
    cut = am.passage_windows(" ".join(words))
    assert cut[0].split()[0] == "w0" and cut[-1].split()[-1] == "w399"
    assert all(len(c.split()) == am.WINDOW_WORDS for c in cut)
    assert am.passage_windows("short passage") == ["short passage"]
    assert am.passage_windows("   ") == []
