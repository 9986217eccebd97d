"""Portable copies of the store's model-output caches: cross-encoder pair scores and judge verdicts.

Why: a cache row is one model's output for one exact input, keyed by the model's identity and the
input's SHA-256, so it is valid in any store. A cache file committed beside the results lets the main
job (and a colleague's clone) read what an hour of model passes produced once, while anything the file
lacks (another corpus, another embedder's top 5) is still computed and cached as usual. The measured
milliseconds travel with each row, so a cost column read from an imported cache is the model's cost
where it ran, not a cache hit's.

A file is gzip-compressed JSON lines: a header ``{"nomadLabCache": 1, "table": ..., "rows": N}`` then
one object per row with the table's columns (not its ``created_at``). It is read and checked in full
before the store is opened, each bad line named by file and line; rows the store already holds are
kept as they are.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.store.tables import TableGroup

__all__ = ["CACHE_TABLES", "CacheFile", "CacheFileError", "CacheFiles", "read_cache_file"]

FORMAT = 1
CACHE_TABLES: dict[str, dict[str, tuple[type, ...]]] = {
    "pair_scores": {"scorer": (str,), "pair_sha256": (str,), "score": (float, int), "ms": (float, int)},
    "judge_verdicts": {
        "model": (str,),
        "input_sha256": (str,),
        "on_topic": (bool,),
        "ok": (bool,),
        "reason": (str,),
        "ms": (float, int),
        "prompt_tokens": (int,),
        "p_true": (float, int),
        "confidence_reason": (str,),
    },
}
"""Each cache table's columns and their JSON types (``None`` allowed where the column is nullable)."""
KEY_COLUMN = {"pair_scores": "scorer", "judge_verdicts": "model"}
"""The column naming the model a row belongs to (what ``--key`` selects on export)."""
REQUIRED = {"scorer", "pair_sha256", "score", "model", "input_sha256", "ok"}


class CacheFileError(NomadLabError, ValueError):
    """A cache file that cannot be imported: the message names the file, line and field."""


@dataclass(frozen=True)
class CacheFile:
    """A read and checked cache file: its table and rows (column -> value)."""

    path: Path
    table: str
    rows: list[dict[str, Any]]


def _check_row(path: Path, line: int, table: str, row: Any) -> dict[str, Any]:
    where = f"{path}:{line}"
    if not isinstance(row, dict):
        raise CacheFileError(f"{where}: a row must be a JSON object, got {type(row).__name__}")
    columns = CACHE_TABLES[table]
    unknown = sorted(set(row) - set(columns))
    if unknown:
        raise CacheFileError(f"{where}: unknown field(s) {', '.join(unknown)} for table {table}")
    checked: dict[str, Any] = {}
    for name, types in columns.items():
        value = checked[name] = row.get(name)
        if value is None:
            if name in REQUIRED:
                raise CacheFileError(f"{where}: field {name!r} is required")
            continue
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise CacheFileError(f"{where}: field {name!r} must be {types[0].__name__}, got {value!r}")
        if float in types:
            checked[name] = float(value)  # one type per column: the import binds each column as one list
    return checked


def read_cache_file(path: Path) -> CacheFile:
    """Read and check a cache file in full (nothing is written anywhere)."""
    path = Path(path)
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        raise CacheFileError(f"{path}: no such cache file") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise CacheFileError(f"{path}: not a gzip-compressed JSON lines cache file ({exc})") from None
    parsed = []
    for number, text in enumerate(lines, 1):
        try:
            parsed.append(json.loads(text))
        except json.JSONDecodeError as exc:
            raise CacheFileError(f"{path}:{number}: not JSON ({exc.msg})") from None
    if not parsed or not isinstance(parsed[0], dict) or parsed[0].get("nomadLabCache") != FORMAT:
        raise CacheFileError(f"{path}:1: the header must be {{'nomadLabCache': {FORMAT}, 'table': ...}}")
    header = parsed[0]
    table = header.get("table")
    if table not in CACHE_TABLES:
        raise CacheFileError(
            f"{path}:1: field 'table' must be one of {', '.join(CACHE_TABLES)}, got {table!r}"
        )
    rows = [_check_row(path, n, table, row) for n, row in enumerate(parsed[1:], 2)]
    if header.get("rows") != len(rows):
        raise CacheFileError(
            f"{path}:1: the header counts {header.get('rows')!r} rows, the file holds {len(rows)}"
        )
    return CacheFile(path, table, rows)


class CacheFiles(TableGroup):
    """Methods of :class:`nomad_lab.store.Store` that export and import cache files."""

    def export_cache(self, table: str, path: Path, keys: Sequence[str] = ()) -> int:
        """Write ``table``'s rows (only those of the models ``keys`` when given) to ``path``; the count.

        Rows are sorted and the gzip stamp fixed, so the same rows always give the same bytes."""
        if table not in CACHE_TABLES:
            raise CacheFileError(f"no cache table {table!r}: one of {', '.join(CACHE_TABLES)}")
        columns = list(CACHE_TABLES[table])
        where = f" WHERE list_contains(?, {KEY_COLUMN[table]})" if keys else ""
        found = self.con.execute(
            f"SELECT {', '.join(columns)} FROM {table}{where} ORDER BY {columns[0]}, {columns[1]}",
            [list(keys)] if keys else [],
        ).fetchall()
        rows = [dict(zip(columns, row, strict=True)) for row in found]
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        with open(partial, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as handle:
            lines = [{"nomadLabCache": FORMAT, "table": table, "rows": len(rows)}, *rows]
            handle.write("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines).encode())
        partial.replace(path)
        return len(rows)

    def import_cache(self, cache: CacheFile) -> int:
        """Add a checked cache file's rows the store lacks, all or none; how many were new.

        One statement over column lists (``unnest``): a row-by-row insert of a committed cache's ten
        thousand rows took about a minute of CPU."""
        if not cache.rows:
            return 0
        columns = list(CACHE_TABLES[cache.table])
        before = self.con.execute(f"SELECT count(*) FROM {cache.table}").fetchone()[0]
        lists = [[row[c] for row in cache.rows] for c in columns]
        with self.transaction():
            self.con.execute(
                f"INSERT OR IGNORE INTO {cache.table} ({', '.join(columns)}, created_at) "
                f"SELECT {', '.join('unnest(?)' for _ in columns)}, ?",
                [*lists, datetime.now(UTC)],
            )
        return self.con.execute(f"SELECT count(*) FROM {cache.table}").fetchone()[0] - before
