"""Which pool file is this: the reference's dump JSON, a pool JSONL file or a pool Parquet file.

Why detection: ``nomad-lab store import FILE`` takes any of the three; Parquet starts with ``PAR1``, a
dump is one JSON object holding ``pools`` (the reference writes it indented, so its first line is ``{``),
and a JSONL file's first line is a whole object (a header or a question). ``--format`` overrides.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nomad_lab.data.dump import load_dump
from nomad_lab.data.pool_format import PoolColumns, PoolFileError
from nomad_lab.data.pool_jsonl import read_pool_jsonl
from nomad_lab.data.pool_parquet import read_pool_parquet

FORMATS = ("dump", "jsonl", "parquet")


def detect_format(path: str | Path) -> str:
    """``parquet`` for a file starting ``PAR1``; then by name, ``dump`` for ``.json`` and ``jsonl`` for
    ``.jsonl``; otherwise ``jsonl`` when the first line is a whole JSON object and not a dump, else
    ``dump`` (whose reader names what is wrong with the file)."""
    try:
        with open(path, "rb") as handle:
            if handle.read(4) == b"PAR1":
                return "parquet"
            handle.seek(0)
            first = next((line for line in handle if line.strip()), b"")
    except OSError as exc:
        raise PoolFileError(f"{path}: cannot read: {exc}") from None
    suffix = Path(path).suffix.lower()
    if suffix in (".json", ".jsonl"):
        return "dump" if suffix == ".json" else "jsonl"
    try:
        record = json.loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return "dump"
    return "dump" if isinstance(record, dict) and "pools" in record else "jsonl"


def read_pool_file(path: str | Path, fmt: str | None = None) -> tuple[str, PoolColumns | dict[str, Any]]:
    """The file's format and its checked content: a dump's dict, or a pool file's columns."""
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise PoolFileError(f"{path}: unknown format {fmt!r} (formats: {', '.join(FORMATS)})")
    readers = {"dump": load_dump, "jsonl": read_pool_jsonl, "parquet": read_pool_parquet}
    return fmt, readers[fmt](path)
