"""What fixes a sufficiency score, in one place: which sentence units of a question's passages are read,
how the frozen ms-marco body reads one (question, unit) pair, and how a containment head turns that
reading into a logit.

Why in the gate ring: the workbench (``gate apply`` through :mod:`nomad_lab.retrieval.sufficiency_model`),
the Python runtime (:mod:`nomad_lab.gate.portable_sufficiency`) and the TypeScript bundle
(``sufficiency_check.ts``, which mirrors this file) must compute the same number for the same question,
so the workbench and the runtime call these functions and the bundle is tested against them. Three
choices make the number a function of the pair alone, so a cache can hold it and a deploy reproduce it:

- one pair per onnxruntime run: the model is INT8 with activations quantized per batch tensor, so a
  batch-mate (or padding) moves a pair's keys, values and logit;
- the keys and values the head reads are rounded to half precision (the head was trained on them so),
  the [CLS] input and the zero-shot logit are kept in single precision;
- the head runs in double precision on those inputs (numpy here, JavaScript numbers in the bundle), so
  two implementations differ by rounding far below any threshold margin.

onnx, onnxruntime and tokenizers are imported only when a body is made.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.cpu_threads import cpu_threads
from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.answer_types import evidence
from nomad_lab.data.sentence_units import CHOSEN, UNIT_WORDS, choose_units, unit_parts

MAX_LENGTH = 320
"""Tokens per (question, unit) pair, the second cut first (a unit is ~130 word-pieces: rarely cut)."""
HEAD_PARAMS = ("q", "o", "ln1", "i", "out", "ln2", "pool", "cls")
LAYER_NORM_EPS = 1e-12


def question_units(
    query: str, passages: Sequence[str], k: int = CHOSEN, words: int = UNIT_WORDS
) -> list[str]:
    """The ``k`` units of a question's passages the check reads (lexical choice, passage order)."""
    parts = [part for p in passages for part in unit_parts(p, words)]
    units = [u for u, _ in parts]
    return [units[i] for i in choose_units(query, units, k, [s for _, s in parts])]


def type_shift(query: str, units: Sequence[str]) -> np.ndarray:
    """Per unit: +1 holds a value of the asked type, -1 holds none, 0 the question asks for no value."""
    found = evidence(query, units)
    if found.expected is None:
        return np.zeros(len(units))
    return np.where(np.array(found.hits, dtype=bool), 1.0, -1.0)


def body_outputs(model: Any) -> tuple[int, list[str]]:
    """The top layer of a BERT ONNX graph and the names of its keys, values and [CLS] input (the layer's
    residual input), appended to the graph's outputs (``model``: an ``onnx.ModelProto``, changed)."""
    import onnx  # heavy

    layers = sorted(
        {int(n.name.split("/layer.")[1].split("/")[0]) for n in model.graph.node if "/layer." in n.name}
    )
    if not layers:
        raise NomadLabError("not a BERT encoder export (no /bert/encoder/layer.N nodes)")
    top = f"/bert/encoder/layer.{layers[-1]}"
    nodes = {n.name: n for n in model.graph.node}
    outputs = [
        f"{top}/attention/self/key/Add_output_0",
        f"{top}/attention/self/value/Add_output_0",
        nodes[f"{top}/attention/output/Add"].input[1],
    ]
    present = {o.name for o in model.graph.output}
    for name in outputs:
        if name not in present:
            model.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    return layers[-1], outputs


def body_model(path: str | Path) -> tuple[Any, int, list[str]]:
    """The ONNX model at ``path`` with its body outputs added (:func:`body_outputs`)."""
    import onnx  # heavy

    model = onnx.load_from_string(Path(path).read_bytes())
    top, outputs = body_outputs(model)
    return model, top, outputs


@dataclass(frozen=True)
class UnitReading:
    """The body's reading of one pair: keys and values (tokens x hidden, half precision, as the head was
    trained on), the [CLS] input (hidden,) and the model's own logit."""

    k: np.ndarray
    v: np.ndarray
    h: np.ndarray
    logit: float


class UnitBody:
    """An ONNX session over a body graph (:func:`body_outputs`) and its tokenizer: one pair per run.
    ``threads``: onnxruntime's intra-op threads, by default :func:`cpu_threads` (2, or NOMAD_LAB_THREADS)."""

    def __init__(
        self, model_bytes: bytes, outputs: Sequence[str], tokenizer: str | Path, threads: int | None = None
    ):
        import onnxruntime as ort  # heavy
        from tokenizers import Tokenizer  # heavy

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or cpu_threads()
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
        self.outputs = list(outputs)
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_LENGTH, strategy="only_second")

    def read_one(self, question: str, text: str) -> UnitReading:
        encoding = self.tokenizer.encode(question, text)
        feed = {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
        }
        logit, k, v, h = self.session.run(["logits", *self.outputs], feed)
        return UnitReading(
            k[0].astype(np.float16), v[0].astype(np.float16), h[0, 0].astype(np.float32), float(logit[0, 0])
        )

    def read(self, pairs: Sequence[tuple[str, str]]) -> list[UnitReading]:
        return [self.read_one(q, t) for q, t in pairs]


_erf = np.vectorize(math.erf, otypes=[float])


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean()
    var = ((x - mean) ** 2).mean()
    return (x - mean) / np.sqrt(var + LAYER_NORM_EPS) * weight + bias


def head_logit(
    weights: Mapping[str, np.ndarray], heads: int, k: np.ndarray, v: np.ndarray, h: np.ndarray
) -> float:
    """The fine-tuned head's logit for one reading, in double precision: the last layer's [CLS] row
    (one attention row over the frozen keys and values, feed-forward with exact GELU), pooler and
    classifier, as ``nomad_lab.retrieval.answer_model.make_head`` computes it in PyTorch."""
    w = {name: np.asarray(value, dtype=np.float64) for name, value in weights.items()}
    k, v, h = (np.asarray(x, dtype=np.float64) for x in (k, v, h))
    d = h.shape[0]
    size = d // heads
    q = (w["q.weight"] @ h + w["q.bias"]).reshape(heads, size)
    kk = k.reshape(-1, heads, size).transpose(1, 0, 2)
    vv = v.reshape(-1, heads, size).transpose(1, 0, 2)
    att = np.einsum("hs,hts->ht", q, kk) / math.sqrt(size)
    att = np.exp(att - att.max(axis=1, keepdims=True))
    att /= att.sum(axis=1, keepdims=True)
    context = np.einsum("ht,hts->hs", att, vv).reshape(d)
    a = _layer_norm(w["o.weight"] @ context + w["o.bias"] + h, w["ln1.weight"], w["ln1.bias"])
    inner = w["i.weight"] @ a + w["i.bias"]
    gelu = 0.5 * inner * (1.0 + _erf(inner / math.sqrt(2.0)))
    f = _layer_norm(w["out.weight"] @ gelu + w["out.bias"] + a, w["ln2.weight"], w["ln2.bias"])
    pooled = np.tanh(w["pool.weight"] @ f + w["pool.bias"])
    return float((w["cls.weight"] @ pooled + w["cls.bias"])[0])


def best_unit(logits: Sequence[float], shift: np.ndarray, weight: float) -> float:
    """A question's score: its best ``logit + weight * shift`` over its units (NaN: no unit)."""
    return float(np.max(np.asarray(logits, dtype=float) + weight * shift)) if len(logits) else math.nan
