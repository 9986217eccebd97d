"""The exact estimator: the model's own tokenizer, read from its local GGUF (0% error on the text).

Why beside the estimates: a user may prefer exactness to speed when the GGUF is on disk (the embedded
backend, or an Ollama blob). Only the vocabulary is loaded (``vocab_only``), not the weights; the
price is measured in ``benchmarks/estimator_throughput.py`` as seconds per MB. The chat overheads
stay the seed's (3 per conversation, 4 per message), so only the content counts change.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path

from nomad_lab.core.estimator import messages_cost


@cache
def _vocab(path: str) -> object:
    from llama_cpp import Llama

    return Llama(path, vocab_only=True, verbose=False)


class ExactEstimator:
    """``estimate(text)`` = the number of tokens ``path``'s tokenizer gives (no BOS, no specials)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"exact token counts need the model's GGUF; no file at {self.path}")
        self._llama = _vocab(str(self.path))

    def estimate(self, text: str) -> int:
        if not text:
            return 0
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))  # type: ignore[attr-defined]

    def messages(self, messages: Iterable[object]) -> int:
        return messages_cost(messages, self.estimate)
