"""Loading GGUFs into llama.cpp, once per (file, context size), and describing them as Ollama would.

Why apart from the backend (``embedded``): the ``Llama`` instances are process-wide (a model loads once
however many backends, shim routes or embedders use it) and freed before interpreter shutdown; and the
``/api/show`` description of a loaded file is what both the backend's ``show()`` and the Ollama shim
serve. ``num_ctx`` is bounded here, before anything reaches ``Llama``.
"""

from __future__ import annotations

import atexit
import logging
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nomad_lab.backends.gguf_meta import GGUFFormatError, numeric_arrays
from nomad_lab.backends.models import (
    PART_MODELS,
    ModelFileNotFound,
    gemma_path,
    part_model_path,
    smollm2_path,
)
from nomad_lab.core.context_window import CONTEXT_LADDER
from nomad_lab.core.cpu_threads import cpu_threads

__all__ = [
    "DEFAULT_N_CTX",
    "DEFAULT_THREADS",
    "MAX_N_CTX",
    "OLLAMA_SAMPLER_DEFAULTS",
    "LoadedModel",
    "bounded_n_ctx",
    "human_number",
    "load_model",
    "loaded_model",
    "metadata_value",
    "resolve_model_path",
    "show_payload",
    "unload_all",
]

log = logging.getLogger(__name__)

DEFAULT_N_CTX = 4096  # Ollama's default context length
MAX_N_CTX = CONTEXT_LADDER[-1]
"""Largest context ever allocated: the top rung the context resolver can choose. llama.cpp allocates the
KV cache for ``n_ctx`` tokens up front, so an absurd ``num_ctx`` (from a spec, a shim client or bad
metadata) must be bounded before it reaches ``Llama``; 0 would even mean "the GGUF's own, unchecked"."""
DEFAULT_THREADS = cpu_threads()  # 2, or NOMAD_LAB_THREADS on a machine shared with other model runs
# Ollama's defaults (api/types.go DefaultOptions) for samplers a request leaves unset.
OLLAMA_SAMPLER_DEFAULTS: dict[str, float] = {
    "temperature": 0.8,
    "top_p": 0.9,
    "top_k": 40,
    "min_p": 0.0,
    "repeat_penalty": 1.1,
}
# llama.cpp `general.file_type` → the quantization label Ollama shows.
FILE_TYPES = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    19: "IQ2_XXS",
    20: "IQ2_XS",
    24: "IQ1_S",
    25: "IQ4_NL",
    30: "IQ4_XS",
    32: "BF16",
}
_INT = re.compile(r"^-?\d{1,20}$")  # a GGUF integer is at most 64 bits: 20 digits
_FLOAT = re.compile(r"^-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")


def resolve_model_path(name: str) -> tuple[str, Path]:
    """(display name, GGUF path) for an embedded alias or a file path; aliases resolve via packages."""

    if name == "gemma3-270m":
        return name, gemma_path()
    if name == "smollm2-135m":
        return name, smollm2_path()
    if name in PART_MODELS:
        return name, part_model_path(name)
    path = Path(name).expanduser()
    if not path.is_file():
        raise ModelFileNotFound(f"no GGUF file at {path}")
    return path.stem.lower(), path


@dataclass
class LoadedModel:
    """One ``Llama`` instance with its lock; llama.cpp contexts are not thread-safe."""

    llama: Any
    path: Path
    n_ctx: int
    lock: threading.Lock
    load_ms: float
    closed: bool = False


_LOADED: dict[str, LoadedModel] = {}
_LOAD_LOCK = threading.Lock()


def bounded_n_ctx(requested: object, default: int = DEFAULT_N_CTX) -> int:
    """``requested`` as a context size llama.cpp may allocate: a positive int, at most ``MAX_N_CTX``.

    Anything else (0, negative, a float or a string from a client's JSON) means ``default``.
    """
    if isinstance(requested, bool) or not isinstance(requested, int) or requested <= 0:
        return default
    if requested > MAX_N_CTX:
        log.warning("num_ctx %d is beyond %d tokens; capped", requested, MAX_N_CTX)
        return MAX_N_CTX
    return requested


def load_model(path: Path, n_ctx: int, threads: int = DEFAULT_THREADS) -> LoadedModel:
    """The cached model for ``path``, reloaded if ``n_ctx`` differs (one instance per path).

    Reloading on a context change is what Ollama does, and it is the cost the context resolver's
    memoization exists to avoid; ``load_ms`` lets callers see it. ``n_ctx`` is bounded first.
    """
    from llama_cpp import Llama  # optional, heavy: the llm extra

    n_ctx = bounded_n_ctx(n_ctx)
    key = str(Path(path).resolve())
    with _LOAD_LOCK:
        loaded = _LOADED.get(key)
        if loaded is not None and loaded.n_ctx == n_ctx:
            return loaded
        if loaded is not None:
            with loaded.lock:  # wait for an in-flight call on the old context
                loaded.closed = True
                loaded.llama.close()
        started = time.perf_counter()
        llama = Llama(model_path=key, n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False)
        loaded = LoadedModel(llama, Path(key), n_ctx, threading.Lock(), (time.perf_counter() - started) * 1e3)
        _LOADED[key] = loaded
        return loaded


def loaded_model(path: Path) -> LoadedModel | None:
    """The loaded instance of this file (at whatever context size), if any, without loading it."""
    return _LOADED.get(str(path.resolve()))


def unload_all() -> None:
    """Free every loaded model. Registered with ``atexit``: a ``Llama`` left for interpreter shutdown
    raises "'NoneType' object is not callable" from its ``__del__`` once ctypes globals are gone."""
    with _LOAD_LOCK:
        for loaded in _LOADED.values():
            if loaded.lock.acquire(timeout=5):  # an abandoned stream may still hold it: never hang exit
                loaded.closed = True
                loaded.llama.close()
                loaded.lock.release()
        _LOADED.clear()


atexit.register(unload_all)


def metadata_value(raw: str) -> Any:
    """A GGUF metadata value from ``Llama.metadata`` (always a string there) as the JSON type it was."""
    if raw in ("true", "false"):
        return raw == "true"
    if _INT.match(raw):
        return int(raw)
    if _FLOAT.match(raw):
        return float(raw)
    return raw


def human_number(count: int) -> str:
    """Parameter count the way Ollama prints ``parameter_size`` ("268.10M", "8.0B")."""
    for unit, scale, digits in (("B", 1e9, 1), ("M", 1e6, 2), ("K", 1e3, 0)):
        if count >= scale:
            value = count / scale
            return f"{value:.0f}{unit}" if value == int(value) else f"{value:.{digits}f}{unit}"
    return str(count)


def file_arrays(path: str | Path) -> dict[str, list[Any]]:
    """The GGUF file's numeric arrays, or none when the file cannot be read again (moved, or not a GGUF
    this reader knows): the arrays only refine the KV accounting, the loaded model's scalars stand."""
    try:
        return numeric_arrays(path)
    except (OSError, GGUFFormatError):
        return {}


def show_payload(loaded: LoadedModel) -> dict[str, Any]:
    """An Ollama ``/api/show`` body for a GGUF: what the Ollama shim serves and ``show()`` parses."""
    llama = loaded.llama
    info = {key: metadata_value(value) for key, value in llama.metadata.items()}
    # llama.cpp's metadata API leaves arrays out; per-layer ones (KV heads) matter to the window.
    info.update(
        (key, values) for key, values in file_arrays(loaded.path).items() if not key.startswith("tokenizer.")
    )
    template = info.pop("tokenizer.chat_template", "")
    arch = str(info.get("general.architecture", ""))
    params = f"num_ctx {loaded.n_ctx}\n" + "\n".join(
        f"{name} {value}" for name, value in OLLAMA_SAMPLER_DEFAULTS.items()
    )
    return {
        "modelfile": f"FROM {loaded.path}\n",
        "parameters": params,
        "template": template,
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": arch,
            "families": [arch] if arch else None,
            "parameter_size": human_number(int(llama._model.n_params())),
            "quantization_level": FILE_TYPES.get(info.get("general.file_type", -1), "unknown"),
        },
        "model_info": info,
        "capabilities": ["completion"],
    }
