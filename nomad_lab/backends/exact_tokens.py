"""The exact estimator: the model's own tokenizer, read from its local GGUF (0% error on the text).

Why beside the estimates: a user may prefer exactness to speed when the GGUF is on disk (the embedded
backend, or an Ollama blob). Only the vocabulary is loaded (``vocab_only``), not the weights; the
price is measured in ``benchmarks/estimator_throughput.py`` as seconds per MB. The chat overheads
stay the seed's (3 per conversation, 4 per message), so only the content counts change.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from nomad_lab.core.token_estimator import messages_cost

_VOCABS: dict[str, Any] = {}
_VOCABS_LOCK = threading.Lock()


def gguf_vocab(path: str) -> Any:
    """The tokenizer of a local GGUF (``vocab_only``: no weights), loaded once per path."""
    with _VOCABS_LOCK:
        if path not in _VOCABS:
            from llama_cpp import Llama  # optional, heavy: the llm extra

            _VOCABS[path] = Llama(path, vocab_only=True, verbose=False)
        return _VOCABS[path]


def close_vocabs() -> None:
    """Free every loaded vocabulary. Registered with ``atexit``: a ``Llama`` left for interpreter
    shutdown raises "'NoneType' object is not callable" from its ``__del__`` once ctypes globals are gone."""
    with _VOCABS_LOCK:
        for vocab in _VOCABS.values():
            vocab.close()
        _VOCABS.clear()


atexit.register(close_vocabs)


class ExactEstimator:
    """``estimate(text)`` = the number of tokens ``path``'s tokenizer gives (no BOS, no specials)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"exact token counts need the model's GGUF; no file at {self.path}")
        self._llama = gguf_vocab(str(self.path))

    def estimate(self, text: str) -> int:
        if not text:
            return 0
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def messages(self, messages: Iterable[object]) -> int:
        return messages_cost(messages, self.estimate)
