"""A study's result as a value: named tables of typed rows, its documents, figures and provenance;
nothing written.

Why: each study used to write its own files (its own JSON dump, its own plot saving), with its
own way of formatting a cell, so the writers were near-copies of each other, a NaN printed as
``nan [nan, nan]`` and a ``|`` in a gate name shifted a row. A study now hands back a :class:`Result`
and the one writer of the publish ring (:mod:`nomad_lab.publish.results`) writes ``results/`` from it.

- a :class:`Field` is a column: where a row keeps its value (``key``, a dotted path into the row), its
  header, its unit and its format (a Python format spec, a ``scale`` applied first, a ``suffix``
  after, the text shown when the value is absent);
- a :class:`Table` is named rows under fields; a cell that is absent (None, NaN, an interval whose
  estimate is NaN) shows :data:`ABSENT`, never ``nan``, and a cell's ``|`` is escaped, so no value can
  break its row;
- a :class:`Page` is a markdown file: paragraphs and tables in order;
- a :class:`Figure` draws a matplotlib figure when asked (the writer saves it), an :class:`Artefact`
  saves a model file where the writer says (its format lives with its reader);
- ``json`` holds the study's stored documents (what pages' markers select from), ``lines`` its JSONL
  logs, ``texts`` other text files as rendered (a CSV of raw rows), ``provenance`` the record of the
  run (:func:`nomad_lab.studies.shape.execute` fills it).

Rendering a page is pure (a string), so a test checks a study's tables without a folder, and the
committed markdown can be rebuilt from the stored JSON alone. Only the standard library: every ring
above may hold a result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ABSENT = "–"
"""What a cell shows for a value that was not measured (None, NaN): never ``nan``."""


def absent(value: Any) -> bool:
    """True for None, NaN and empty text, and for an interval ``[estimate, low, high]`` whose estimate
    is absent."""
    if value is None or value == "":
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, list | tuple) and value:
        return absent(value[0])
    return False


def escape(text: str) -> str:
    """A cell's text that cannot break its table row: ``|`` escaped, line breaks as spaces."""
    return text.replace("\\|", "|").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


@dataclass(frozen=True)
class Value:
    """A typed scalar with its own unit and format: the cell of a table whose rows differ in kind (a
    "what | value" table of costs), where one column cannot carry one format."""

    value: Any
    unit: str = ""
    fmt: str = ""
    scale: float = 1
    suffix: str = ""


@dataclass(frozen=True)
class Field:
    """A column: the row's value at ``key`` (``a.b`` walks a nested row), shown under ``label``.

    ``fmt`` is a Python format spec (``.3f``, ``+.1f``, ``,d``; empty: the value as text), ``scale``
    multiplies a number first (100 for a share shown in points), ``suffix`` follows each number
    (``%``). A value ``[estimate, low, high]`` is an interval and shows ``estimate [low, high]``.
    ``absent`` is what an unmeasured value shows. ``unit`` says what the number is (``share``, ``s``,
    ``ms``, ``count``, ``points``) for readers of the value; ``right`` aligns the column right;
    ``code`` shows the cell (absent text included) as code.
    """

    key: str
    label: str
    unit: str = ""
    fmt: str = ""
    scale: float = 1
    suffix: str = ""
    absent: str = ABSENT
    right: bool = False
    code: bool = False

    def value(self, row: Mapping[str, Any]) -> Any:
        """The row's value of this field (None when the row lacks it)."""
        value: Any = row
        for step in self.key.split("."):
            if not isinstance(value, Mapping) or step not in value:
                return None
            value = value[step]
        return value

    def cell(self, row: Mapping[str, Any]) -> str:
        """The row's cell as markdown: formatted, absent shown as :attr:`absent`, ``|`` escaped."""
        value = self.value(row)
        form = value if isinstance(value, Value) else self
        value = value.value if isinstance(value, Value) else value
        text = self.absent if absent(value) else formatted(value, form.fmt, form.scale, form.suffix)
        return escape(f"`{text}`" if self.code else text)


def formatted(value: Any, fmt: str = "", scale: float = 1, suffix: str = "") -> str:
    """``value`` by a format spec: a number scaled then formatted, an interval as ``e [low, high]``,
    anything else as text; an absent number inside an interval shows :data:`ABSENT`."""
    if isinstance(value, list | tuple) and len(value) == 3 and all(_number(v) or v is None for v in value):
        low, high = (formatted(v, fmt, scale, suffix) for v in value[1:])
        return f"{formatted(value[0], fmt, scale, suffix)} [{low}, {high}]"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ABSENT
    if _number(value):
        return format(value * scale if scale != 1 else value, fmt) + suffix
    return str(value) + suffix


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class Table:
    """Named rows under typed fields. ``title`` is a line above the table (the first words of it are
    how a page's ``table`` marker may pick it), ``key`` the field naming a row (the first one)."""

    name: str
    fields: tuple[Field, ...]
    rows: tuple[Mapping[str, Any], ...]
    title: str = ""

    @property
    def key(self) -> Field:
        return self.fields[0]

    def row(self, key: str) -> Mapping[str, Any]:
        """The row whose key field reads ``key``; a missing row is a KeyError naming the known ones."""
        for row in self.rows:
            if str(self.key.value(row)) == key:
                return row
        raise KeyError(f"table {self.name}: no row {key!r} (rows: {[self.key.value(r) for r in self.rows]})")

    def markdown(self) -> str:
        """The table in GitHub markdown (with its title line above it, if any)."""
        lines = [self.title, ""] if self.title else []
        lines.append("| " + " | ".join(escape(f.label) for f in self.fields) + " |")
        lines.append("|" + "".join("---:|" if f.right else "---|" for f in self.fields))
        lines += ["| " + " | ".join(f.cell(row) for f in self.fields) + " |" for row in self.rows]
        return "\n".join(lines)


def listing(name: str, header: tuple[str, str], items: Sequence[tuple[str, Value]]) -> Table:
    """A two-column "what | value" table whose values each carry their own unit and format (costs)."""
    fields = (Field("what", header[0]), Field("value", header[1]))
    return Table(name, fields, tuple({"what": what, "value": value} for what, value in items))


Block = str | Table


@dataclass(frozen=True)
class Page:
    """A markdown file of the result: its paragraphs and tables in order, a blank line between."""

    name: str
    blocks: tuple[Block, ...]

    def markdown(self) -> str:
        parts = [b.markdown() if isinstance(b, Table) else b for b in self.blocks]
        return "\n\n".join(p.rstrip("\n") for p in parts if p) + "\n"

    def tables(self) -> dict[str, Table]:
        return {b.name: b for b in self.blocks if isinstance(b, Table)}


@dataclass(frozen=True)
class Figure:
    """A plot by file name (``curves.png``): ``draw()`` returns the matplotlib figure, which the
    writer saves (PNG and SVG) and closes; nothing is drawn until then."""

    name: str
    draw: Callable[[], Any]


@dataclass(frozen=True)
class Artefact:
    """A file that is not a result but a thing made (a gate's head and weights): ``save(path)`` writes
    it at the path the writer gives and returns the main file; its format belongs to its reader."""

    name: str
    save: Callable[[Path], Path]


@dataclass(frozen=True)
class Result:
    """What a study hands back: ``value`` (its computation, for Python callers; never published as
    such), its stored documents by file name (``json``), markdown ``pages``, ``figures``, JSONL
    ``lines`` by file name, other ``texts`` by file name (written as given, byte for byte: a CSV of raw
    rows a later run re-reads), ``artefacts``, and the ``provenance`` record of the run. ``out`` is the
    folder its run asked for; ``printed`` names the page the command prints (the first by default);
    ``said`` is what the command prints for a result that publishes no page."""

    study: str
    value: Any = None
    json: Mapping[str, Any] = field(default_factory=dict)
    pages: tuple[Page, ...] = ()
    figures: tuple[Figure, ...] = ()
    lines: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    texts: Mapping[str, str] = field(default_factory=dict)
    artefacts: tuple[Artefact, ...] = ()
    provenance: Mapping[str, Any] | None = None
    out: Path | None = None
    printed: str | None = None
    said: str = ""

    def page(self, name: str) -> Page:
        for page in self.pages:
            if page.name == name:
                return page
        raise KeyError(f"{self.study}: no page {name!r} (pages: {[p.name for p in self.pages]})")

    def table(self, name: str) -> Table:
        """The table called ``name`` on any page."""
        for page in self.pages:
            if name in page.tables():
                return page.tables()[name]
        raise KeyError(f"{self.study}: no table {name!r}")

    def markdown(self) -> str:
        """What the study's command prints: the ``printed`` page (the first), or nothing."""
        if not self.pages:
            return self.said
        return self.page(self.printed).markdown() if self.printed else self.pages[0].markdown()

    def placed(self, **changes: Any) -> Result:
        """This result with ``changes`` (its provenance, its folder) set: results are frozen."""
        return replace(self, **changes)
