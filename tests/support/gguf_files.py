"""GGUF files written with the ``gguf`` package: metadata-only ones for the KV accounting, and a copy
of SmolLM2 whose ``head_count_kv`` is a per-layer array (llama.cpp loads it; the shim serves it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gguf
from gguf.scripts.gguf_new_metadata import MetadataDetails, copy_with_new_metadata


def write_metadata_gguf(path: Path, arch: str, values: dict[str, Any]) -> Path:
    """A GGUF with no tensors and ``values`` (keys without the ``<arch>.`` prefix) as its metadata."""
    writer = gguf.GGUFWriter(str(path), arch)
    for key, value in values.items():
        full = f"{arch}.{key}"
        if isinstance(value, list):
            sub = gguf.GGUFValueType.INT32 if min(value, default=0) < 0 else gguf.GGUFValueType.UINT32
            writer.add_key_value(full, value, gguf.GGUFValueType.ARRAY, sub_type=sub)
        elif isinstance(value, float):
            writer.add_key_value(full, value, gguf.GGUFValueType.FLOAT32)
        elif value < 0:
            writer.add_key_value(full, value, gguf.GGUFValueType.INT32)
        else:
            writer.add_key_value(full, value, gguf.GGUFValueType.UINT32)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()
    return path


def with_per_layer_kv_heads(source: Path, target: Path, per_layer: list[int]) -> Path:
    """A copy of the llama-architecture ``source`` with ``llama.attention.head_count_kv`` as an array."""
    reader = gguf.GGUFReader(str(source))
    writer = gguf.GGUFWriter(str(target), "llama")
    array = MetadataDetails(gguf.GGUFValueType.ARRAY, per_layer, sub_type=gguf.GGUFValueType.UINT32)
    copy_with_new_metadata(reader, writer, {"llama.attention.head_count_kv": array}, [])
    return target
