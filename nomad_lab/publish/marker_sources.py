"""What a page marker reads: the stored file it names, parsed by kind, and the selector walk into it.

Why apart from the markers (:mod:`nomad_lab.publish.docs`): how a ``.json``, ``.csv``, ``.md`` or ``.py``
source is read and how ``.name``, ``["a name"]``, ``[field=value]``, ``[2]`` and ``{COLUMN|COLUMN}`` step
into it is one small language, the same for a value, a table and a claim; the markers module is about
pages (finding markers, rendering and checking them). Rows are picked by key, never by position, so a
rerun that reorders them cannot re-point a page (see the markers module's docstring for the syntax).
"""

from __future__ import annotations

import ast
import csv
import json
import re
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError

STEP = re.compile(r'\.([\w-]+)|\[(-?\d+)\]|\["([^"]+)"\]|\[([^\]=]+)=([^\]]*)\]|\{([^}]*)\}')


def stored(root: Path, source: str, where: str) -> Path:
    """The file a marker names; a ``*`` in it picks the last match by name (timestamped reports: the
    newest), so a rerun's new report is what the page quotes."""
    found = sorted(root.glob(source)) if "*" in source else [root / source]
    if not found or not found[-1].is_file():
        raise NomadLabError(f"{where}: {source}: no such file")
    return found[-1]


def load(path: Path) -> Any:
    """A stored result parsed by its kind (see the module docstring)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    if path.suffix == ".csv":
        return list(csv.DictReader(text.splitlines()))
    if path.suffix == ".py":
        return constants(text)
    tables = Tables(_rows(t) for t in markdown_tables(text))
    tables.keys = table_keys(text)
    return {"tables": tables, "lines": text.splitlines()}


def constants(source: str) -> dict[str, Any]:
    """A Python module's module-level constants whose values are literals (``NAME = 0.62``)."""
    found: dict[str, Any] = {}
    for node in ast.parse(source).body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and getattr(node, "value", None) is not None:
            try:
                found[target.id] = ast.literal_eval(node.value)  # type: ignore[arg-type]
            except ValueError:
                continue
    return found


class Tables(list):
    """A markdown source's tables (each a list of rows by header), with each table's ``keys``: its
    header cells and the line above it (a heading or a bold title), what ``{...}`` picks it by."""

    keys: list[tuple[list[str], str]]


def table_keys(text: str) -> list[tuple[list[str], str]]:
    """(header cells, title) of each table of ``text``; the title is the nearest non-blank line above."""
    keys, above, inside = [], "", False
    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            if not inside:
                keys.append((table_cells(line), above))
            inside = True
        else:
            inside = False
            above = line.strip() or above
    return keys


def markdown_tables(text: str) -> list[list[str]]:
    """Each pipe table of a markdown text as its lines (header, rule, body)."""
    tables: list[list[str]] = []
    current: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.lstrip().startswith("|"):
            current.append(line.strip())
        elif current:
            tables.append(current)
            current = []
    return tables


def table_cells(line: str) -> list[str]:
    """A markdown table line's cells, stripped."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _rows(lines: list[str]) -> list[dict[str, str]]:
    """A table's body rows by header; a repeated header name gets `` (2)``, `` (3)``... so no cell is lost."""
    head: list[str] = []
    for name in table_cells(lines[0]):
        head.append(
            name if name not in head else f"{name} ({sum(h.split(' (')[0] == name for h in head) + 1})"
        )
    return [dict(zip(head, table_cells(line), strict=False)) for line in lines[2:]]


def select(data: Any, selector: str, where: str) -> Any:
    """The value at ``selector`` (see the module docstring); a step that does not resolve is an error."""
    pos, value, shown = 0, data, selector
    selector = selector if selector[:1] in ("", ".", "[") else "." + selector
    while pos < len(selector):
        step = STEP.match(selector, pos)
        if step is None:
            raise NomadLabError(f"{where}: cannot read selector {shown!r} at {selector[pos:]!r}")
        key, index, quoted, field, wanted, columns = step.groups()
        try:
            if columns is not None:
                value = value[pick_table(value.keys, columns, where)]
            elif key is not None or quoted is not None:
                value = value[key if key is not None else quoted]
            elif index is not None:
                if isinstance(value, dict) or any(isinstance(v, dict) or _is_table(v) for v in value):
                    raise NomadLabError(
                        f"{where}: {shown!r}: {step.group(0)!r} picks a row by position; pick it by key, "
                        "as [name=value] (a rerun may reorder rows)"
                    )
                value = value[int(index)]
            else:
                rows = value.values() if isinstance(value, dict) else value
                if field.endswith("~"):
                    value = next(r for r in rows if wanted in str(_field(r, field[:-1])))
                else:
                    value = next(r for r in rows if _same(_field(r, field), wanted))
        except (KeyError, IndexError, TypeError, StopIteration, AttributeError):
            raise NomadLabError(f"{where}: {shown!r}: nothing at {step.group(0)!r}") from None
        pos = step.end()
    return value


def _is_table(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(row, dict) for row in value)


def pick_table(keys: list[tuple[list[str], str]], columns: str, where: str) -> int:
    """The position of the one table each part of ``columns`` (``a|b``) names: a column of its header,
    or the start of the title line above it (``**gemma3-270m (SentencePiece)** ...`` starts with
    ``gemma3-270m``). Tables are picked by what they hold, never by position, so a table added to a file
    cannot re-point a page; none or several matching is an error."""
    wanted = [c.strip() for c in columns.split("|")]
    found = [
        i
        for i, (head, title) in enumerate(keys)
        if all(c in head or title.lstrip("#* ").startswith(c) for c in wanted)
    ]
    if len(found) != 1:
        heads = "; ".join(" | ".join(h) for h, _ in keys) or "none"
        what = "no table" if not found else f"{len(found)} tables"
        raise NomadLabError(f"{where}: {what} with columns {wanted} (tables: {heads})")
    return found[0]


def _field(row: Any, dotted: str) -> Any:
    """``row``'s field ``a.b`` (a nested key), None when absent."""
    for name in dotted.split("."):
        row = row.get(name) if isinstance(row, dict) else None
    return row


def _same(value: Any, wanted: str) -> bool:
    if str(value) == wanted:
        return True
    try:
        return float(value) == float(wanted)
    except (TypeError, ValueError):
        return False
