"""Figures that check themselves: README.md, docs/*.md and the datasets' READMEs quote results only
through markers, and state comparisons only as claims rendered from them.

Why: a number typed into prose goes stale the day its study is rerun, and nothing notices; so does a
word such as "larger" or "not significant". Every number a page takes from ``results/`` sits inside a
marker naming the stored file and where in it the number is; :func:`render` rewrites each marker's text
from that file, and the test suite fails when the committed text differs from the render (a stale or
retyped figure), or when a measurement-shaped number stands outside any marker
(:mod:`nomad_lab.publish.docs_prose`).

Markers, all HTML comments (invisible on GitHub):

- a value: ``<!-- fig results/floor_sweep/floor_sweep.json#calibrated.recall fmt=.3f -->0.468<!-- /fig -->``.
  The selector walks the parsed file: ``.name`` or ``["a name"]`` a key, ``[floor=0.55]`` the first row
  (a list item or a mapping's value) whose ``floor`` reads ``0.55`` (``[embedder.spec=st:]`` a nested
  field), ``[what~=growth]`` the first whose ``what`` contains ``growth``; ``[2]`` an item by position,
  only inside a fixed-shape list of plain values such as an interval ``[estimate, low, high]``: rows are
  picked by key, never by position, so a rerun that reorders them cannot re-point a page. ``fmt=`` is a
  Python format spec (``.3f``, ``.1%``, ``,.0f``) or ``len`` (how many items), ``scale=100`` multiplies
  first, ``word=0`` takes the first word of a table cell such as ``0.886 [0.849, 0.919]`` (commas count
  as spaces); without ``fmt`` a string is quoted as it is stored. A marker never contains ``--`` (GitHub
  would show such a comment as text): the main job's steps are picked by ``what``, not by command line.
- a table: ``<!-- table results/estimator/summary.md#{estimator|error} cols=0,2 -->`` ... ``<!-- /table -->``
  copies the one markdown table of that file whose header holds those columns (or the whole file
  without ``#``), optionally only some of its columns (0-based) and only the body rows whose first cell
  is one of ``rows=a,b`` (by key). A table is picked by its columns (or the first words of the title
  line above it: ``#{gemma3-270m|class}``), never by position: a new table in the file cannot re-point
  the page, and a second table matching as well is an error. The same
  ``{COLUMN|COLUMN}`` step picks a markdown source's table in a value selector
  (``summary.md#tables{estimator}[estimator=segmenter].error``).
- a claim: ``<!-- claim results/a.json#x lt results/b.json#y yes=smaller no=not_smaller -->``
  ``smaller<!-- /claim -->`` compares two stored values (or a value and a number) with ``lt``,
  ``le``, ``gt``, ``ge``, ``eq`` or ``ne`` (a comment cannot hold ``>``; ``lscale=``/``rscale=``
  multiply a side first, ``digits=`` rounds both sides to that many decimals, so a rate of 30/101
  is three times 10/101 as printed) and shows ``yes`` or ``no`` (``_`` for a space): "dominates",
  "met", "not significant" are rendered from the results like any figure, and a typed comparison word
  outside a claim fails the tests (``tests/test_published_pages.py``).

Sources: ``.json``; ``.csv`` (a list of rows by header); ``.md``/``.txt`` (``tables``: each markdown
table as a list of rows by header, ``lines``: the text lines); ``.py`` (its module-level constants, such
as the reference's published figures in ``nomad_lab/core/reference.py``). ``python -m
nomad_lab.publish.docs`` rewrites every marker from the stored files; ``--check`` only reports what
differs.
"""

from __future__ import annotations

import argparse
import operator
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.workspace import PROJECT_ROOT
from nomad_lab.publish.docs_prose import GIVEN, cited, unmarked
from nomad_lab.publish.marker_sources import (
    load,
    markdown_tables,
    pick_table,
    select,
    stored,
    table_cells,
    table_keys,
)

FIG = re.compile(r"<!-- fig (?P<spec>[^>]*?) -->(?P<text>.*?)<!-- /fig -->", re.S)
TABLE = re.compile(r"<!-- table (?P<spec>[^>]*?) -->\n(?P<text>.*?)<!-- /table -->", re.S)
SPEC = re.compile(r'(?P<source>(?:\[(?:"[^"]*"|[^\]"])*\]|\{[^}]*\}|[^\s\[{])+)(?P<options>(?:\s+\w+=\S+)*)')
CLAIM = re.compile(r"<!-- claim (?P<spec>[^>]*?) -->(?P<text>.*?)<!-- /claim -->", re.S)
SOURCE = r'(?:\[(?:"[^"]*"|[^\]"])*\]|\{[^}]*\}|[^\s\[{])+'
OPERATORS = {
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "eq": operator.eq,
    "ne": operator.ne,
}
COMPARISON = re.compile(
    rf"(?P<left>{SOURCE})\s+(?P<op>lt|le|gt|ge|eq|ne)\s+(?P<right>{SOURCE})(?P<options>(?:\s+\w+=\S+)*)"
)


def pages(root: Path = PROJECT_ROOT) -> list[Path]:
    """The pages whose markers are rendered: the README, every docs page and every dataset's README."""
    found = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    return [p for p in [*found, *sorted((root / "datasets").rglob("README.md"))] if p.is_file()]


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


def value_at(marker: Marker, root: Path, where: str) -> Any:
    """The stored value a marker names (its ``word`` of a table cell when asked)."""
    value = select(load(stored(root, marker.source, where)), marker.selector, where)
    if "word" in marker.options:
        words = str(value).replace(",", " ").split()
        try:
            value = words[int(marker.options["word"])]
        except (ValueError, IndexError):
            raise NomadLabError(f"{where}: {value!r} has no word {marker.options['word']}") from None
    return value


def fig_text(marker: Marker, root: Path, where: str) -> str:
    """A value marker's text, from its stored file."""
    value = value_at(marker, root, where)
    fmt, scale = marker.options.get("fmt"), marker.options.get("scale")
    if fmt == "len":
        return str(len(value))
    if fmt is None and scale is None:
        if isinstance(value, dict | list):
            raise NomadLabError(f"{where}: {marker.selector!r} is not a single value")
        return str(value)
    try:
        number = float(value) * float(scale or 1)
        return format(round(number) if (fmt or "").endswith("d") else number, fmt or "g")
    except (TypeError, ValueError) as exc:
        raise NomadLabError(f"{where}: {marker.selector!r} = {value!r}: cannot format: {exc}") from None


def table_text(marker: Marker, root: Path, where: str) -> str:
    """A table marker's text: the stored file, or one of its tables, optionally some rows and columns."""
    text = stored(root, marker.source, where).read_text(encoding="utf-8")
    if not marker.selector:
        return text if text.endswith("\n") else text + "\n"
    tables = markdown_tables(text)
    if not (marker.selector.startswith("{") and marker.selector.endswith("}")):
        raise NomadLabError(
            f"{where}: {marker.source}#{marker.selector}: pick a table by its columns, "
            "#{COLUMN|COLUMN} (a position shifts when a table is added)"
        )
    lines = tables[pick_table(table_keys(text), marker.selector[1:-1], f"{where}: {marker.source}")]
    head, rule, body = lines[0], lines[1], lines[2:]
    if "rows" in marker.options:
        keys = marker.options["rows"].replace("_", " ").split(",")
        body = [line for line in body if table_cells(line)[0] in keys]
        if len(body) != len(keys):
            raise NomadLabError(f"{where}: rows={marker.options['rows']}: not every key is a first cell")
    if "cols" in marker.options:
        keep = _indices(marker.options["cols"], len(table_cells(head)), where)
        head, rule, *body = (
            "| " + " | ".join(table_cells(x)[i] for i in keep) + " |" for x in [head, rule, *body]
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


def claim_text(spec: str, root: Path, where: str) -> str:
    """A claim's word: ``yes`` when the stored comparison holds, else ``no`` (``_`` reads as a space)."""
    parsed = COMPARISON.fullmatch(spec.strip())
    if parsed is None or "--" in spec:
        raise NomadLabError(
            f"{where}: cannot read claim {spec!r}: "
            "expected FILE#SELECTOR lt|le|gt|ge|eq|ne FILE#SELECTOR|NUMBER yes=.. no=.."
        )
    options = dict(o.split("=", 1) for o in parsed.group("options").split())
    if not {"yes", "no"} <= options.keys():
        raise NomadLabError(f"{where}: claim {spec!r} needs yes= and no=")
    sides = []
    for side, scale in ((parsed.group("left"), "lscale"), (parsed.group("right"), "rscale")):
        marker = Marker.parse(side, where)
        try:
            value = float(value_at(marker, root, where) if marker.selector else side)
            sides.append(value * float(options.get(scale, 1)))
        except (TypeError, ValueError):
            raise NomadLabError(f"{where}: claim {spec!r}: {side!r} is not a number") from None
    if "digits" in options:  # compared as printed to that many decimals: 30/101 is 3 x 10/101
        sides = [round(v, int(options["digits"])) for v in sides]
    holds = OPERATORS[parsed.group("op")](*sides)
    return options["yes" if holds else "no"].replace("_", " ")


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

    def claim(match: re.Match[str]) -> str:
        where = f"{name}:{_line(tabled, match.start())}"
        word = claim_text(match.group("spec"), root, where)
        return f"<!-- claim {match.group('spec')} -->{word}<!-- /claim -->"

    tabled = TABLE.sub(table, text)
    return CLAIM.sub(claim, FIG.sub(fig, tabled))


def givens(text: str, name: str, root: Path = PROJECT_ROOT) -> frozenset[str]:
    """The texts a page declares as given settings (``<!-- given FILE#SELECTOR fmt=.. -->``), rendered
    from where they are defined."""
    return frozenset(
        fig_text(Marker.parse(m.group("spec"), f"{name}:{_line(text, m.start())}"), root, name)
        for m in GIVEN.finditer(text)
    )


def prose_problems(text: str, name: str, root: Path = PROJECT_ROOT) -> list[tuple[int, str]]:
    """(line, problem) for what a page's prose says outside its markers: a measurement typed by hand,
    or a citation whose source does not hold what it quotes (:mod:`nomad_lab.publish.docs_prose`)."""
    typed = [
        (line, f"{number} is outside a marker") for line, number in unmarked(text, givens(text, name, root))
    ]
    return sorted([*typed, *cited(text, root)])


def render_pages(root: Path = PROJECT_ROOT, write: bool = True) -> list[str]:
    """Render every page from the stored results (rewriting those that differ unless ``write`` is
    False); one line per page that differed and per results-like number outside a marker. A marker
    that does not resolve raises :class:`NomadLabError` naming its page and line."""
    problems: list[str] = []
    for page in pages(root):
        name = str(page.relative_to(root))
        text = page.read_text(encoding="utf-8")
        rendered = render_text(text, name, root)
        problems += [f"{name}:{line}: {problem}" for line, problem in prose_problems(rendered, name, root)]
        if rendered != text:
            problems.append(
                f"{name}: differs from its stored results" + ("" if write else " (not rewritten)")
            )
            if write:
                page.write_text(rendered, encoding="utf-8")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nomad_lab.publish.docs",
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
