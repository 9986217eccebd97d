"""A GGUF file's metadata without loading the model, numeric arrays included (``Llama.metadata`` has none).

Why: llama.cpp's metadata API returns scalars only, but a hybrid model's per-layer
``<arch>.attention.head_count_kv`` (0 for layers without KV) is an array, and the KV accounting needs
it. ``gguf.GGUFReader`` would read it too but parses every field, taking seconds on a 262k-entry
vocabulary; this reads the header's key-value section only, skipping string arrays by their lengths.
Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (version 2 and 3, little-endian).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

from nomad_lab.core.errors import NomadLabError

MAGIC = b"GGUF"
# GGUF value type → struct format of one scalar (8 = string, 9 = array are handled apart).
SCALAR_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
STRING, ARRAY = 8, 9
MAX_KV_COUNT = 1 << 20


class GGUFFormatError(NomadLabError):
    """The file is not a GGUF this reader understands (names the file and what is wrong)."""


def _read(handle: BinaryIO, fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = handle.read(size)
    if len(data) != size:
        raise EOFError("unexpected end of file")
    return struct.unpack("<" + fmt, data)[0]


def _skip_string(handle: BinaryIO) -> None:
    handle.seek(_read(handle, "Q"), 1)


def _string(handle: BinaryIO) -> str:
    length = _read(handle, "Q")
    return handle.read(length).decode("utf-8", errors="replace")


def numeric_arrays(path: str | Path) -> dict[str, list[Any]]:
    """Only the numeric arrays of ``path``'s metadata (what ``Llama.metadata`` leaves out)."""
    return {key: value for key, value in read_metadata(path).items() if isinstance(value, list)}


def _skip_value(handle: BinaryIO, kind: int) -> None:
    if kind == STRING:
        _skip_string(handle)
    elif kind in SCALAR_FORMATS:
        handle.seek(struct.calcsize(SCALAR_FORMATS[kind]), 1)
    else:
        raise ValueError(f"unknown value type {kind}")


def _array(handle: BinaryIO) -> list[Any] | None:
    """A numeric array's values; other arrays (strings, nested) are skipped and give None."""
    kind, count = _read(handle, "I"), _read(handle, "Q")
    if kind in SCALAR_FORMATS:
        size = struct.calcsize(SCALAR_FORMATS[kind])
        data = handle.read(size * count)
        if len(data) != size * count:
            raise EOFError("unexpected end of file")
        return list(struct.unpack(f"<{count}{SCALAR_FORMATS[kind]}", data))
    if kind == ARRAY:
        for _ in range(count):
            _array(handle)
        return None
    for _ in range(count):
        _skip_value(handle, kind)
    return None


def read_metadata(path: str | Path) -> dict[str, Any]:
    """``path``'s metadata: scalars, strings and numeric arrays by key (string arrays are skipped)."""
    try:
        with open(path, "rb") as handle:
            if handle.read(4) != MAGIC:
                raise GGUFFormatError(f"{path}: not a GGUF file (bad magic)")
            version = _read(handle, "I")
            if version not in (2, 3):
                raise GGUFFormatError(f"{path}: GGUF version {version} unsupported (2 or 3)")
            _read(handle, "Q")  # tensor count
            kv_count = _read(handle, "Q")
            if kv_count > MAX_KV_COUNT:
                raise GGUFFormatError(f"{path}: metadata count {kv_count} is absurd")
            metadata: dict[str, Any] = {}
            for _ in range(kv_count):
                key, kind = _string(handle), _read(handle, "I")
                if kind == ARRAY:
                    if (values := _array(handle)) is not None:
                        metadata[key] = values
                elif kind == STRING:
                    metadata[key] = _string(handle)
                elif kind in SCALAR_FORMATS:
                    metadata[key] = _read(handle, SCALAR_FORMATS[kind])
                else:
                    raise ValueError(f"unknown value type {kind} at key {key!r}")
            return metadata
    except (EOFError, ValueError, struct.error, OverflowError, MemoryError) as exc:
        raise GGUFFormatError(f"{path}: malformed GGUF metadata ({exc})") from exc
