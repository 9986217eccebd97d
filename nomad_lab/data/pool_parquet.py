"""Candidate pools as Parquet: the JSONL records as rows, the header in the file's key-value metadata.

Why Parquet too: a stack that logs retrievals at scale (10^5 questions, a million candidates) writes
columnar files, and reading one with DuckDB into arrays takes a fraction of parsing the same JSON. The
schema is the JSONL record's: one row per question, ``candidates`` a list of structs, ``scores`` a
struct of doubles. A row is named ``file: row N`` (1-based) in errors. DuckDB is imported per call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nomad_lab.data.pool_format import (
    CANDIDATE_FIELDS,
    FORMAT,
    OPTIONAL_COLUMNS,
    PARQUET_KEY,
    QUESTION_FIELDS,
    PoolColumns,
    PoolFileError,
    check_header,
    check_question,
    validate,
)

REQUIRED = ("id", "query", "candidates")
FLAT = "SELECT c.* FROM (SELECT unnest(candidates) AS c FROM read_parquet(?))"
"""The candidates' fields as columns (for their names and types)."""
_NUMBER_TYPES = ("DOUBLE", "FLOAT", "INTEGER", "BIGINT", "SMALLINT", "TINYINT", "HUGEINT", "DECIMAL")


def _fields(con: Any, sql: str, path: str) -> dict[str, str]:
    return {row[0]: row[1] for row in con.execute(f"DESCRIBE {sql}", [path]).fetchall()}


def _check_type(source: str, name: str, found: str, wanted: tuple[str, ...]) -> None:
    if not any(found.startswith(w) for w in wanted):
        raise PoolFileError(f"{source}: column {name}: expected {' or '.join(wanted)}, got {found}")


def _schema(con: Any, source: str) -> tuple[dict[str, str], list[str], list[str]]:
    """The question columns' types, the optional candidate fields present and the named score columns;
    one error line for a column of the wrong type or a name the format does not know."""
    top = _fields(con, "SELECT * FROM read_parquet(?)", source)
    missing = [c for c in REQUIRED if c not in top]
    unknown = sorted(set(top) - set(QUESTION_FIELDS))
    if missing or unknown:
        why = (
            f"missing column(s) {', '.join(missing)}"
            if missing
            else f"unknown column(s) {', '.join(unknown)}"
        )
        raise PoolFileError(f"{source}: {why} (columns: {', '.join(QUESTION_FIELDS)})")
    wanted = {"id": "VARCHAR", "query": "VARCHAR", "suite": "VARCHAR", "refusalKind": "VARCHAR"}
    wanted |= {"tags": "VARCHAR[]", "relevantDocIds": "VARCHAR[]", "candidates": "STRUCT("}
    for name, kind in top.items():
        _check_type(source, name, kind, (wanted[name],))
    cand = _fields(con, FLAT, source)
    unknown = sorted(set(cand) - set(CANDIDATE_FIELDS))
    lacking = [c for c in ("rank", "docId", "score") if c not in cand]
    if unknown or lacking:
        why = (
            f"lack field(s) {', '.join(lacking)}"
            if lacking
            else f"have unknown field(s) {', '.join(unknown)}"
        )
        raise PoolFileError(f"{source}: candidates {why} (fields: {', '.join(CANDIDATE_FIELDS)})")
    for name, kind in cand.items():
        number = name in ("rank", "score", "semanticScore")
        _check_type(
            source,
            f"candidates.{name}",
            kind,
            _NUMBER_TYPES if number else ("STRUCT(",) if name == "scores" else ("VARCHAR",),
        )
    names = []
    if "scores" in cand:
        for name, kind in _fields(con, f"SELECT s.* FROM (SELECT scores AS s FROM ({FLAT}))", source).items():
            _check_type(source, f"candidates.scores.{name}", kind, _NUMBER_TYPES)
            names.append(name)
    return top, [n for n in OPTIONAL_COLUMNS if n in cand], names


def read_pool_parquet(path: str | Path) -> PoolColumns:
    """Read and check a pool Parquet file in full; one :class:`PoolFileError` names the row and field."""
    import duckdb  # heavy
    import numpy as np  # heavy

    source = str(path)
    con = duckdb.connect()
    try:
        try:
            meta = {
                bytes(k).decode("utf-8", "replace"): bytes(v).decode("utf-8", "replace")
                for k, v in con.execute("SELECT key, value FROM parquet_kv_metadata(?)", [source]).fetchall()
            }
            top, optional, names = _schema(con, source)
        except duckdb.Error as exc:
            raise PoolFileError(
                f"{source}: not a readable Parquet file: {str(exc).splitlines()[0]}"
            ) from None
        try:
            header = json.loads(meta.get(PARQUET_KEY, json.dumps({"format": FORMAT})))
        except json.JSONDecodeError as exc:
            raise PoolFileError(f"{source}: metadata {PARQUET_KEY!r}: not JSON ({exc.msg})") from None
        header = check_header(header, f"{source}: metadata {PARQUET_KEY!r}")
        get = {c: (c if c in top else "NULL") for c in QUESTION_FIELDS}
        rows = con.execute(
            f"SELECT {get['id']}, {get['query']}, {get['suite']}, coalesce({get['tags']}, []::VARCHAR[]), "
            f"{get['refusalKind']}, coalesce({get['relevantDocIds']}, []::VARCHAR[]), "
            "coalesce(len(candidates), 0) FROM read_parquet(?, file_row_number = true) "
            "ORDER BY file_row_number",
            [source],
        ).fetchall()
        picks = [f"c.{name}" for name in ("rank", "docId", "score", *optional)]
        picks += [f"c.scores.{_quote(name)}" for name in names]
        values = con.execute(
            f"SELECT {', '.join(picks)} FROM (SELECT file_row_number AS r, "
            "generate_subscripts(candidates, 1) AS i, unnest(candidates) AS c "
            "FROM read_parquet(?, file_row_number = true)) ORDER BY r, i",
            [source],
        ).fetchnumpy()
    finally:
        con.close()
    where = [f"{source}: row {i + 1}" for i in range(len(rows))]
    for i, row in enumerate(rows):
        if row[0] is None or row[1] is None:
            raise PoolFileError(
                f"{where[i]}: {'id' if row[0] is None else 'query'}: expected a string, got null"
            )
        check_question(
            {"id": row[0], "query": row[1], "refusalKind": row[4], "relevantDocIds": row[5]}, where[i]
        )
    offsets = np.concatenate([[0], np.cumsum([r[6] for r in rows])]).astype(np.int64)
    columns = dict(
        zip(
            ["rank", "docId", "score", *optional, *(f"scores.{n}" for n in names)],
            values.values(),
            strict=True,
        )
    )
    for name, array in columns.items():
        if name != "docId" and np.ma.is_masked(array):
            j = int(np.flatnonzero(np.ma.getmaskarray(array))[0])
            q = int(np.searchsorted(offsets, j, side="right")) - 1
            raise PoolFileError(
                f"{where[q]}: candidates[{j - offsets[q]}].{name}: expected a value, got null"
            )
    result = PoolColumns(
        source=source,
        header=header,
        ids=[r[0] for r in rows],
        queries=[r[1] for r in rows],
        suites=[r[2] for r in rows],
        tags=[list(r[3]) for r in rows],
        kinds=[r[4] for r in rows],
        relevant=[list(r[5]) for r in rows],
        where=where,
        offsets=offsets,
        rank=np.asarray(columns["rank"], dtype=np.int64),
        doc_id=_plain(columns["docId"]),
        score=np.asarray(columns["score"], dtype=float),
        chunk_id=_plain(columns["chunkId"]) if "chunkId" in columns else None,
        text=_plain(columns["text"]) if "text" in columns else None,
        semantic=np.asarray(columns["semanticScore"], dtype=float) if "semanticScore" in columns else None,
        scores={n: np.asarray(columns[f"scores.{n}"], dtype=float) for n in names},
    )
    validate(result)
    return result


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _plain(array: Any) -> list[Any]:
    """A fetched string column as a list (nulls as None)."""
    import numpy as np  # heavy

    if np.ma.isMaskedArray(array):
        return [
            None if m else v
            for v, m in zip(array.data.tolist(), np.ma.getmaskarray(array).tolist(), strict=True)
        ]
    return list(array.tolist())


def write_pool_parquet(
    path: str | Path, header: Mapping[str, Any], records: Iterable[Mapping[str, Any]]
) -> Path:
    """Write pool records as Parquet (through a JSON lines file DuckDB reads with the format's schema)."""
    import tempfile

    import duckdb  # heavy

    records = list(records)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    first = next((c for r in records for c in r["candidates"]), {})
    fields = ["rank INTEGER", "docId VARCHAR", "score DOUBLE"]
    fields += [
        f"{n} {'DOUBLE' if n == 'semanticScore' else 'VARCHAR'}" for n in OPTIONAL_COLUMNS if n in first
    ]
    if first.get("scores"):
        fields.append("scores STRUCT(" + ", ".join(f"{_quote(n)} DOUBLE" for n in first["scores"]) + ")")
    schema = {
        "id": "VARCHAR",
        "query": "VARCHAR",
        "suite": "VARCHAR",
        "tags": "VARCHAR[]",
        "refusalKind": "VARCHAR",
        "relevantDocIds": "VARCHAR[]",
        "candidates": f"STRUCT({', '.join(fields)})[]",
    }
    meta = json.dumps({"format": FORMAT, **header}).replace("'", "''")
    with tempfile.TemporaryDirectory() as folder:
        lines = Path(folder) / "pools.jsonl"
        lines.write_text("".join(json.dumps(r, allow_nan=False) + "\n" for r in records), encoding="utf-8")
        con = duckdb.connect()
        try:
            target = str(out).replace("'", "''")
            con.execute(
                f"COPY (SELECT * FROM read_json(?, format = 'newline_delimited', columns = {schema!r})) "
                f"TO '{target}' (FORMAT parquet, KV_METADATA {{'{PARQUET_KEY}': '{meta}'}})",
                [str(lines)],
            )
        finally:
            con.close()
    return out
