"""What every table group of the store shares: the open DuckDB connection and all-or-nothing writes.

Why a base: each table group (``index_tables``, ``runs``, ``dumps``, ``verdicts``, ``pair_scores``,
``study_rows``, ``notebook_cells``, ``calls``, ``answers``) is a small mixin holding that group's SQL;
:class:`Store` (``db``) composes them over one connection, so callers keep one object and one file.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError

__all__ = ["StoreError", "StoreLockedError", "StoreSchemaError", "TableGroup"]


class StoreError(NomadLabError, RuntimeError):
    """The store file cannot be used (not a DuckDB file, locked, or not a nomad-lab store)."""


class StoreSchemaError(StoreError):
    """The store was written with another schema version; it is left untouched."""


class StoreLockedError(StoreError):
    """Another process holds the store's write lock and kept it longer than the wait."""


class TableGroup:
    """The connection a table group's methods run on (set by :class:`nomad_lab.store.Store`)."""

    con: Any
    path: Path
    found_version: int

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing writes."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    def insert_rows(self, into: str, types: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """``INSERT`` (``into``: the statement up to its values, e.g. ``"INSERT INTO pools"``) every row,
        column ``i`` cast to ``types[i]``, in one statement that unnests one list per column.

        Why not ``executemany``: DuckDB runs it a row at a time, and a retrieval run writes thousands of
        pool rows and hundreds of vectors (several times slower, measured in the test suite's runs)."""
        if not rows:
            return
        columns = [list(column) for column in zip(*rows, strict=True)]
        unnests = ", ".join(f"unnest(?::{t}[])" for t in types)
        self.con.execute(f"{into} SELECT {unnests}", columns)

    @property
    def schema_version(self) -> int:
        return int(
            self.con.execute("SELECT value FROM nomad_lab_meta WHERE key = 'schema_version'").fetchone()[0]
        )
