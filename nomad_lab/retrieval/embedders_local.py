"""In-process embedders besides sentence-transformers: a GGUF through llama-cpp-python, and WordLlama.

Why these two: they are what installs and runs offline here next to MiniLM. ``gguf:`` runs any GGUF in
llama.cpp's embedding mode with mean pooling (a real embedding GGUF such as nomic-embed-text's, or the bundled
chat models, which embed poorly but exercise the path); windows of ``window_chars`` characters (default
1,000) stay inside its 512-token context, and llama.cpp truncates as a last guard. ``wordllama:`` is a static
token-embedding model (16 MB, 256-d, shipped in its wheel): it has no length limit, so a whole chunk is one
window; its loader looks for a tokenizer under ``cache_dir/tokenizers`` and would otherwise download, so the
bundled tokenizer config is copied into a project-owned cache first (FEASIBILITY.md §3).
"""

from __future__ import annotations

import hashlib
import shutil
import weakref
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nomad_lab.backends.embedded import resolve_model_path
from nomad_lab.backends.models import ModelFileNotFound
from nomad_lab.core.cpu_threads import cpu_threads
from nomad_lab.core.workspace import PROJECT_ROOT
from nomad_lab.retrieval.embedder_base import Embedder, force_offline
from nomad_lab.retrieval.embedder_spec import EmbedderError, EmbedderSpec

__all__ = ["GGUFEmbedder", "WordLlamaEmbedder"]

GGUF_N_CTX = 512
WORDLLAMA_CACHE = PROJECT_ROOT / ".cache" / "wordllama"


def file_digest(path: Path, limit: int = 1 << 24) -> str:
    """sha256 of the first 16 MiB and the size: a cheap identity for a large weights file."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        digest.update(handle.read(limit))
    return f"sha256-16M:{digest.hexdigest()[:16]}:size={path.stat().st_size}"


class GGUFEmbedder(Embedder):
    """``gguf:<path or alias>``: llama.cpp embedding mode, mean pooling, 2 threads."""

    def __init__(self, spec: EmbedderSpec):
        import llama_cpp  # optional, heavy: the llm extra

        try:
            self.name, path = resolve_model_path(spec.target)
        except ModelFileNotFound as exc:
            raise EmbedderError(f"embedder {spec.text}: {exc}") from None
        self.spec = spec
        self.batch_size = spec.int_option("batch", 8)
        self.window_chars = spec.int_option("window_chars", 1000)
        self.model_version = spec.options.get("version", file_digest(path))
        self.llama = llama_cpp.Llama(
            str(path),
            embedding=True,
            n_ctx=GGUF_N_CTX,
            n_batch=GGUF_N_CTX,
            n_ubatch=GGUF_N_CTX,
            n_threads=cpu_threads(),
            pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
            verbose=False,
        )
        self.dimension = int(self.llama.n_embd())
        # freed with this embedder, or before interpreter shutdown (a Llama left for shutdown raises)
        weakref.finalize(self, self.llama.close)

    @property
    def window_description(self) -> str:
        return f"max {self.window_chars} characters per window, mean pooling, n_ctx {GGUF_N_CTX}"

    def _forward(self, batch: Sequence[str]) -> np.ndarray:
        return np.asarray(self.llama.embed(list(batch), normalize=False, truncate=True), dtype=np.float64)


class WordLlamaEmbedder(Embedder):
    """``wordllama:[dimension]``: the bundled l2_supercat model, truncated to ``dimension`` (Matryoshka)."""

    def __init__(self, spec: EmbedderSpec):
        force_offline()
        import wordllama  # optional, heavy: the embed extra
        from wordllama import WordLlama  # optional, heavy: the embed extra

        tokenizers = WORDLLAMA_CACHE / "tokenizers"
        tokenizers.mkdir(parents=True, exist_ok=True)
        bundled = Path(wordllama.__file__).parent / "tokenizers" / "l2_supercat_tokenizer_config.json"
        if not (tokenizers / bundled.name).exists():
            shutil.copy(bundled, tokenizers)
        dimension = int(spec.target)
        try:
            self.model = WordLlama.load(cache_dir=WORDLLAMA_CACHE, disable_download=True, trunc_dim=dimension)
        except ValueError as exc:
            raise EmbedderError(f"embedder {spec.text}: {exc}") from None
        self.spec = spec
        self.name = f"wordllama/l2_supercat_256@{dimension}d"
        self.model_version = spec.options.get("version", f"wordllama=={_version('wordllama')}")
        self.dimension = dimension
        self.batch_size = spec.int_option("batch", 64)
        self.window_chars = spec.int_option("window_chars", 3000)

    def _forward(self, batch: Sequence[str]) -> np.ndarray:
        return np.asarray(self.model.embed(list(batch), norm=False), dtype=np.float64)


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)
