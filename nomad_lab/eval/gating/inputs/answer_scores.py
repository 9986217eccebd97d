"""``answer_scores`` (key: an answerability gate file): the file's fine-tuned head's best logit over
the windows of each question's top-5 set (NaN: empty pool). The ONNX body's reading of each window is
cached beside the store (by body digest), so a second gather runs only the small head."""

from __future__ import annotations

import numpy as np

from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.gate.answer_file import AnswerGate
from nomad_lab.retrieval.answer_cache import cache_root, gate_scores

KIND = "answer_scores"


def gather(ctx: GatherContext, key: str) -> np.ndarray:
    where = f"answer:{key} on run {ctx.data.run_id}"
    gate = AnswerGate.load(key)
    gate.check_run(ctx.data.embedder, ctx.data.pools.fingerprint, where)
    questions = [(q, ctx.passages(i)) for i, q in enumerate(ctx.data.queries)]
    bar = None
    if ctx.progress:
        from tqdm import tqdm  # heavy

        bar = tqdm(desc=f"answer {key}: new windows", leave=False)
    update = None if bar is None else bar.update
    scores = gate_scores(gate, questions, cache_root(ctx.store_path), where, update)
    if bar is not None:
        bar.close()
    return scores


def check(key: str) -> None:
    """The answerability gate file and its weights are there and match (read, not run)."""
    AnswerGate.load(key)
