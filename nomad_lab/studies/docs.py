"""Figures that check themselves: README.md and docs/*.md quote results only through markers.

Why: a number typed into prose goes stale the day its study is rerun, and nothing notices. Every
number the front door and the study pages take from ``results/`` sits inside a marker naming the
stored file and where in it the number is; :func:`render` rewrites each marker's text from that
file, and the test suite fails when the committed text differs from the render (a stale or retyped
figure), or when a results-like number stands outside any marker.

Two markers, both HTML comments (invisible on GitHub):

- a value: ``<!-- fig results/floor_sweep/floor_sweep.json#rows[0].leak fmt=.3f -->0.345<!-- /fig -->``.
  The selector walks the parsed file: ``.name`` or ``["a name"]`` a key, ``[3]`` a list item (or a
  row's 4th cell), ``[floor=0.55]`` the first row (a list item or a mapping's value) whose ``floor`` reads
  ``0.55``, ``[what~=growth]`` the first whose ``what`` contains ``growth``. ``fmt=`` is a Python
  format spec (``.3f``, ``.1%``, ``,.0f``) or ``len`` (how many items), ``scale=100`` multiplies first,
  ``word=0`` takes the first word of a table cell such as ``0.886 [0.849, 0.919]`` (commas count as
  spaces); without ``fmt`` a string is quoted as it is stored. A marker never contains ``--`` (GitHub
  would show such a comment as text): the main job's steps are picked by ``what``, not by command line.
- a table: ``<!-- table results/estimator/summary.md#2 rows=0,3 cols=0,2 -->`` ... ``<!-- /table -->``
  copies the third markdown table of that file (or the whole file without ``#N``), optionally only
  some of its body rows and columns (0-based).

The reference system's own figures render the same way, from ``docs/reference_records.json``. A figure
no file here holds (one from a superseded run kept for the story) says where it is from instead:
``<!-- cited git show e12d534^:results/estimator/summary.md -->32.1%<!-- /cited -->``; it is not checked.

Sources: ``.json``; ``.csv`` (a list of rows by header); ``.md``/``.txt`` (``tables``: each markdown
table as a list of rows by header, ``lines``: the text lines). ``python -m nomad_lab.studies.docs``
rewrites every marker from the stored files; ``--check`` only reports what differs.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.workspace import PROJECT_ROOT

FIG = re.compile(r"<!-- fig (?P<spec>[^>]*?) -->(?P<text>.*?)<!-- /fig -->", re.S)
TABLE = re.compile(r"<!-- table (?P<spec>[^>]*?) -->\n(?P<text>.*?)<!-- /table -->", re.S)
SPEC = re.compile(r'(?P<source>(?:\[(?:"[^"]*"|[^\]"])*\]|[^\s\[])+)(?P<options>(?:\s+\w+=\S+)*)')
CITED = re.compile(r"<!-- cited (?P<spec>[^>]*?) -->(?P<text>.*?)<!-- /cited -->", re.S)
STEP = re.compile(r'\.([\w-]+)|\[(-?\d+)\]|\["([^"]+)"\]|\[([^\]=]+)=([^\]]*)\]')
RESULTS_LIKE = re.compile(r"(?<![\w.])(\d+\.\d{3}|\d+\.\d+%|\d+\.\d+×)(?![\w.])")
"""Numbers shaped like measurements (three decimals, a decimal percentage, a decimal ratio): outside a
marker, in a page's prose, they are retyped figures."""


def pages(root: Path = PROJECT_ROOT) -> list[Path]:
    """The pages whose markers are rendered: the README and every docs page (those that exist)."""
    return [p for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))] if p.is_file()]


@dataclass(frozen=True)
class Marker:
    """One marker's source file, selector and options, parsed from its comment."""

    source: str
    selector: str
    options: dict[str, str]

    @classmethod
    def parse(cls, spec: str, where: str) -> Marker:
        if "--" in spec:
            raise NomadLabError(
                f"{where}: a marker cannot contain '--' (GitHub then shows it as text): {spec!r}"
            )
        parsed = SPEC.fullmatch(spec.strip())
        if parsed is None:
            raise NomadLabError(
                f"{where}: cannot read marker {spec!r}: expected FILE[#SELECTOR] [name=value ...]"
            )
        path, _, selector = parsed.group("source").partition("#")
        return cls(path, selector, dict(o.split("=", 1) for o in parsed.group("options").split()))


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
    return {"tables": [_rows(t) for t in markdown_tables(text)], "lines": text.splitlines()}


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


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _rows(lines: list[str]) -> list[dict[str, str]]:
    """A table's body rows by header; a repeated header name gets `` (2)``, `` (3)``... so no cell is lost."""
    head: list[str] = []
    for name in _cells(lines[0]):
        head.append(
            name if name not in head else f"{name} ({sum(h.split(' (')[0] == name for h in head) + 1})"
        )
    return [dict(zip(head, _cells(line), strict=False)) for line in lines[2:]]


def select(data: Any, selector: str, where: str) -> Any:
    """The value at ``selector`` (see the module docstring); a step that does not resolve is an error."""
    pos, value, shown = 0, data, selector
    selector = selector if selector[:1] in ("", ".", "[") else "." + selector
    while pos < len(selector):
        step = STEP.match(selector, pos)
        if step is None:
            raise NomadLabError(f"{where}: cannot read selector {shown!r} at {selector[pos:]!r}")
        key, index, quoted, field, wanted = step.groups()
        try:
            if key is not None or quoted is not None:
                value = value[key if key is not None else quoted]
            elif index is not None:
                items = list(value.values()) if isinstance(value, dict) else value
                value = items[int(index)]
            else:
                rows = value.values() if isinstance(value, dict) else value
                if field.endswith("~"):
                    value = next(r for r in rows if wanted in str(r.get(field[:-1])))
                else:
                    value = next(r for r in rows if _same(r.get(field), wanted))
        except (KeyError, IndexError, TypeError, StopIteration, AttributeError):
            raise NomadLabError(f"{where}: {shown!r}: nothing at {step.group(0)!r}") from None
        pos = step.end()
    return value


def _same(value: Any, wanted: str) -> bool:
    if str(value) == wanted:
        return True
    try:
        return float(value) == float(wanted)
    except (TypeError, ValueError):
        return False


def fig_text(marker: Marker, root: Path, where: str) -> str:
    """A value marker's text, from its stored file."""
    value = select(load(stored(root, marker.source, where)), marker.selector, where)
    if "word" in marker.options:
        words = str(value).replace(",", " ").split()
        try:
            value = words[int(marker.options["word"])]
        except (ValueError, IndexError):
            raise NomadLabError(f"{where}: {value!r} has no word {marker.options['word']}") from None
    fmt, scale = marker.options.get("fmt"), marker.options.get("scale")
    if fmt == "len":
        return str(len(value))
    if fmt is None and scale is None:
        if isinstance(value, dict | list):
            raise NomadLabError(f"{where}: {marker.selector!r} is not a single value")
        return str(value)
    try:
        number = float(value) * float(scale or 1)
        return format(number, fmt or "g")
    except (TypeError, ValueError) as exc:
        raise NomadLabError(f"{where}: {marker.selector!r} = {value!r}: cannot format: {exc}") from None


def table_text(marker: Marker, root: Path, where: str) -> str:
    """A table marker's text: the stored file, or one of its tables, optionally some rows and columns."""
    text = stored(root, marker.source, where).read_text(encoding="utf-8")
    if not marker.selector:
        return text if text.endswith("\n") else text + "\n"
    tables = markdown_tables(text)
    try:
        lines = tables[int(marker.selector)]
    except (ValueError, IndexError):
        raise NomadLabError(
            f"{where}: {marker.source} has {len(tables)} tables, no #{marker.selector}"
        ) from None
    head, rule, body = lines[0], lines[1], lines[2:]
    if "rows" in marker.options:
        body = [body[i] for i in _indices(marker.options["rows"], len(body), where)]
    if "cols" in marker.options:
        keep = _indices(marker.options["cols"], len(_cells(head)), where)
        head, rule, *body = (
            "| " + " | ".join(_cells(x)[i] for i in keep) + " |" for x in [head, rule, *body]
        )
    return "\n".join([head, rule, *body]) + "\n"


def _indices(text: str, size: int, where: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        try:
            out += list(range(int(first), int(last or first) + 1))
        except ValueError:
            raise NomadLabError(f"{where}: {text!r}: expected indices like 0,2-4") from None
    if bad := [i for i in out if not 0 <= i < size]:
        raise NomadLabError(f"{where}: {text!r}: {bad} out of range (0-{size - 1})")
    return out


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def render_text(text: str, name: str, root: Path = PROJECT_ROOT) -> str:
    """``text`` with every marker's content rewritten from its stored file."""

    def table(match: re.Match[str]) -> str:
        where = f"{name}:{_line(text, match.start())}"
        marker = Marker.parse(match.group("spec"), where)
        return f"<!-- table {match.group('spec')} -->\n{table_text(marker, root, where)}<!-- /table -->"

    def fig(match: re.Match[str]) -> str:
        where = f"{name}:{_line(tabled, match.start())}"
        marker = Marker.parse(match.group("spec"), where)
        return f"<!-- fig {match.group('spec')} -->{fig_text(marker, root, where)}<!-- /fig -->"

    tabled = TABLE.sub(table, text)
    return FIG.sub(fig, tabled)


def unmarked(text: str) -> Iterator[tuple[int, str]]:
    """(line, number) of each results-like number outside markers, code spans and code blocks."""
    blanked = TABLE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    blanked = FIG.sub(lambda m: "\n" * m.group(0).count("\n"), blanked)
    blanked = CITED.sub(lambda m: "\n" * m.group(0).count("\n"), blanked)
    blanked = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), blanked, flags=re.S)
    blanked = re.sub(r"`[^`\n]*`", "", blanked)
    for number, line in enumerate(blanked.splitlines(), start=1):
        if line.startswith("    "):  # an indented code block
            continue
        for match in RESULTS_LIKE.finditer(line):
            yield number, match.group(0)


def render_pages(root: Path = PROJECT_ROOT, write: bool = True) -> list[str]:
    """Render every page from the stored results (rewriting those that differ unless ``write`` is
    False); one line per page that differed and per results-like number outside a marker. A marker
    that does not resolve raises :class:`NomadLabError` naming its page and line."""
    problems: list[str] = []
    for page in pages(root):
        name = str(page.relative_to(root))
        text = page.read_text(encoding="utf-8")
        rendered = render_text(text, name, root)
        problems += [f"{name}:{line}: {number} is outside a marker" for line, number in unmarked(rendered)]
        if rendered != text:
            problems.append(
                f"{name}: differs from its stored results" + ("" if write else " (not rewritten)")
            )
            if write:
                page.write_text(rendered, encoding="utf-8")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nomad_lab.studies.docs",
        description="render the figure markers of README.md and docs/",
    )
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page differs")
    args = parser.parse_args(argv)
    try:
        problems = render_pages(write=not args.check)
    except NomadLabError as exc:
        print(f"docs: error: {exc}", file=sys.stderr)
        return 1
    for line in problems:
        print(line)
    return 1 if args.check and problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
