"""Candidate pools as JSON lines: an optional header line, then one question per line (docs/pools.md).

Why JSON lines: a recorder appends a question as soon as its retriever answers, and an error names
the line a user opens in an editor. Every field's type is checked here, line by line; the rules that
span candidates (ranks, descending scores, finite numbers, consistent columns) are checked on the
columns by :func:`nomad_lab.data.pool_format.validate`.
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
    QUESTION_FIELDS,
    PoolColumns,
    PoolFileError,
    check_header,
    check_question,
    validate,
)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _check_object(value: Any, fields: tuple[str, ...], where: str, expected: str) -> None:
    """A question line and each of its candidates are objects holding only the format's fields: a
    misspelt field would otherwise read as a missing one, so the error lists the fields it knows."""
    if not isinstance(value, dict):
        raise PoolFileError(f"{where}: expected {expected}")
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise PoolFileError(f"{where}: unknown field(s) {', '.join(unknown)} (fields: {', '.join(fields)})")


class _Columns:
    """Accumulates records into column lists, checking each field's type and column consistency."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.questions: dict[str, list[Any]] = {
            k: [] for k in ("ids", "queries", "suites", "tags", "kinds", "relevant", "where")
        }
        self.cand: dict[str, list[Any]] = {
            k: [] for k in ("rank", "doc_id", "score", "chunkId", "text", "semanticScore")
        }
        self.offsets = [0]
        self.scores: dict[str, list[float]] = {}
        self.present: dict[str, str] | None = None  # column -> where first seen (or missing)

    def add(self, record: Any, where: str) -> None:
        _check_object(record, QUESTION_FIELDS, where, "a JSON object (one question per line)")
        for key, ok, what in (
            ("id", isinstance(record.get("id"), str), "a string"),
            ("query", isinstance(record.get("query"), str), "a string"),
            ("suite", record.get("suite") is None or isinstance(record["suite"], str), "a string"),
            ("tags", _strings(record.get("tags", [])), "an array of strings"),
            (
                "refusalKind",
                record.get("refusalKind") is None or isinstance(record["refusalKind"], str),
                "a string",
            ),
            ("relevantDocIds", _strings(record.get("relevantDocIds", [])), "an array of strings"),
            ("candidates", isinstance(record.get("candidates"), list), "an array"),
        ):
            if not ok:
                raise PoolFileError(f"{where}: {key}: expected {what}, got {record.get(key)!r}")
        check_question(record, where)
        q = self.questions
        q["ids"].append(record["id"])
        q["queries"].append(record["query"])
        q["suites"].append(record.get("suite"))
        q["tags"].append(list(record.get("tags", [])))
        q["kinds"].append(record.get("refusalKind"))
        q["relevant"].append(list(record.get("relevantDocIds", [])))
        q["where"].append(where)
        for j, candidate in enumerate(record["candidates"]):
            self._candidate(candidate, f"{where}: candidates[{j}]")
        self.offsets.append(self.offsets[-1] + len(record["candidates"]))

    def _candidate(self, c: Any, where: str) -> None:
        _check_object(c, CANDIDATE_FIELDS, where, "an object")
        if not isinstance(c.get("rank"), int) or isinstance(c.get("rank"), bool):
            raise PoolFileError(f"{where}.rank: expected an integer, got {c.get('rank')!r}")
        if "docId" not in c or not (c["docId"] is None or isinstance(c["docId"], str)):
            raise PoolFileError(f"{where}.docId: expected a string or null, got {c.get('docId')!r}")
        if not _number(c.get("score")):
            raise PoolFileError(f"{where}.score: expected a number, got {c.get('score')!r}")
        scores = c.get("scores", {})
        if not isinstance(scores, dict) or not all(_number(v) for v in scores.values()):
            raise PoolFileError(f"{where}.scores: expected an object of numbers, got {scores!r}")
        shape = {name: name in c for name in OPTIONAL_COLUMNS} | {f"scores.{n}": True for n in scores}
        self._check_columns(shape, where)
        for name, ok in (
            ("chunkId", isinstance(c.get("chunkId"), str)),
            ("text", isinstance(c.get("text"), str)),
        ):
            if name in c and not ok:
                raise PoolFileError(f"{where}.{name}: expected a string, got {c[name]!r}")
        if "semanticScore" in c and not _number(c["semanticScore"]):
            raise PoolFileError(f"{where}.semanticScore: expected a number, got {c['semanticScore']!r}")
        self.cand["rank"].append(c["rank"])
        self.cand["doc_id"].append(c["docId"])
        self.cand["score"].append(float(c["score"]))
        for name in OPTIONAL_COLUMNS:
            if name in c:
                self.cand[name].append(c[name])
        for name, value in scores.items():
            self.scores.setdefault(name, []).append(float(value))

    def _check_columns(self, shape: dict[str, bool], where: str) -> None:
        """The first candidate sets the file's columns; every later one must hold the same."""
        if self.present is None:
            self.present = {name: where for name, has in shape.items() if has}
            return
        for name in sorted(set(self.present) | {n for n, has in shape.items() if has}):
            if shape.get(name, False) != (name in self.present):
                first = self.present.get(name)
                why = (
                    f"missing, though {first} has it"
                    if first
                    else "present, though the first candidate lacks it"
                )
                raise PoolFileError(f"{where}.{name}: {why} (a column is on every candidate or on none)")

    def finish(self, header: dict[str, Any]) -> PoolColumns:
        import numpy as np  # heavy

        present = self.present or {}
        c, q = self.cand, self.questions
        return PoolColumns(
            source=self.source,
            header=header,
            ids=q["ids"],
            queries=q["queries"],
            suites=q["suites"],
            tags=q["tags"],
            kinds=q["kinds"],
            relevant=q["relevant"],
            where=q["where"],
            offsets=np.asarray(self.offsets, dtype=np.int64),
            rank=np.asarray(c["rank"], dtype=np.int64),
            doc_id=c["doc_id"],
            score=np.asarray(c["score"], dtype=float),
            chunk_id=c["chunkId"] if "chunkId" in present else None,
            text=c["text"] if "text" in present else None,
            semantic=np.asarray(c["semanticScore"], dtype=float) if "semanticScore" in present else None,
            scores={name: np.asarray(values, dtype=float) for name, values in self.scores.items()},
        )


def read_pool_jsonl(path: str | Path) -> PoolColumns:
    """Read and check a pool JSONL file in full; any problem is one :class:`PoolFileError` naming the line."""
    source = str(path)
    columns = _Columns(source)
    header: dict[str, Any] = {"format": FORMAT}
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                where = f"{source}:{number}"
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise PoolFileError(f"{where}: invalid JSON: {exc.msg} (column {exc.colno})") from None
                if isinstance(record, dict) and "format" in record:
                    if columns.questions["ids"] or len(header) > 1:
                        raise PoolFileError(f"{where}: the header line comes first, once")
                    header = {**check_header(record, where), "line": where}
                    continue
                columns.add(record, where)
    except OSError as exc:
        raise PoolFileError(f"{source}: cannot read: {exc}") from None
    except UnicodeDecodeError as exc:
        raise PoolFileError(f"{source}: not UTF-8 text: {exc}") from None
    if not columns.questions["ids"]:
        raise PoolFileError(f"{source}: no questions (one JSON object per line)")
    header.pop("line", None)
    result = columns.finish(check_header(header, source))
    validate(result)
    return result


def write_pool_jsonl(
    path: str | Path, header: Mapping[str, Any], records: Iterable[Mapping[str, Any]]
) -> Path:
    """Write a header line and one question per line (what the recorders call); the path written."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"format": FORMAT, **header}) + "\n")
        for record in records:
            handle.write(json.dumps(record, allow_nan=False) + "\n")
    return out
