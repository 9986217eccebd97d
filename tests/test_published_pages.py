"""Pages that cannot drift: no ``nan`` in any published markdown, no table row whose cells do not
match its header (a ``|`` inside a value), and no typed comparison word in the prose of the README and
docs/ outside a claim marker (a claim renders its word from the stored results; see
:mod:`nomad_lab.publish.docs`). Each checker is also run on planted text, so each can fail."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from nomad_lab.data.refusal_kinds import OFF_TOPIC
from nomad_lab.studies.gating.gate_report import leaderboard
from tests.support.paths import ROOT

NAN = re.compile(r"(?<![\w.])nan(?![\w])", re.IGNORECASE)
RENDERED = re.compile(r"<!-- (claim|fig|table) .*?<!-- /\1 -->", re.S)
COMMENT = re.compile(r"<!--.*?-->", re.S)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\([^)]*\)")
WORDS = re.compile(r"\b(doubl\w*|tripl\w*|halv\w*|quadrupl\w*|dominat\w*|exceed\w*|met)\b", re.IGNORECASE)


def published_markdown() -> list[Path]:
    return sorted(p for p in (ROOT / "results").rglob("*.md") if p.is_file())


def prose_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def nan_lines(text: str) -> list[int]:
    """Lines that print a NaN (``nan``, ``NaN``, ``nan%``), outside code spans."""
    return [i for i, line in enumerate(text.splitlines(), 1) if NAN.search(CODE.sub("", line))]


def cells(row: str) -> int:
    """How many cells a markdown table row has, split as GitHub splits it (``\\|`` is text)."""
    return len(re.split(r"(?<!\\)\|", row.strip().strip("|"))) if row.strip() != "|" else 0


def broken_rows(text: str) -> list[int]:
    """Lines of a table whose cell count differs from its header's."""
    found, header = [], None
    for i, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith("|"):
            header = None
        elif header is None:
            header = cells(line)
        elif cells(line) != header:
            found.append(i)
    return found


def _blank(match: re.Match[str]) -> str:
    """A removed region's line breaks, so line numbers still point at the page."""
    return "\n" * match.group(0).count("\n")


def typed_comparisons(text: str) -> list[tuple[int, str]]:
    """Comparison words typed in prose: outside claim, fig and table markers (rendered from results),
    comments, code and link targets."""
    for pattern in (RENDERED, COMMENT, FENCE):
        text = pattern.sub(_blank, text)
    return [
        (i, m.group(0))
        for i, line in enumerate(text.splitlines(), 1)
        for m in WORDS.finditer(LINK.sub("", CODE.sub("", line)))
    ]


def test_no_published_markdown_prints_nan() -> None:
    found = {str(p.relative_to(ROOT)): nan_lines(p.read_text(encoding="utf-8")) for p in published_markdown()}
    assert {k: v for k, v in found.items() if v} == {}


def test_every_table_row_has_its_headers_cells() -> None:
    pages = [*published_markdown(), *prose_pages()]
    found = {str(p.relative_to(ROOT)): broken_rows(p.read_text(encoding="utf-8")) for p in pages}
    assert {k: v for k, v in found.items() if v} == {}


def test_no_comparison_word_is_typed_in_prose() -> None:
    found = {
        str(p.relative_to(ROOT)): typed_comparisons(p.read_text(encoding="utf-8")) for p in prose_pages()
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_the_checkers_find_what_is_planted() -> None:
    assert nan_lines("| a | nan [nan, nan] |\n| b | 0.5 |\n| c | NaN% |") == [1, 3]
    assert nan_lines("a `nan` in code, a financial name, 1.nan") == []
    table = "| gate | leak |\n|---|---|\n| floor|0.5 | 1% |\n| floor\\|0.5 | 1% |"
    assert broken_rows(table) == [3]
    prose = (
        "The leak doubles here.\n<!-- claim a.json#x gt b.json#y yes=dominates no=trails -->dominates"
        "<!-- /claim --> and `met` in code.\nThe target is met."
    )
    assert typed_comparisons(prose) == [(1, "doubles"), (3, "met")]


def test_a_pipe_in_a_gate_name_cannot_break_the_leaderboard() -> None:
    row = SimpleNamespace(name="learned: choose pool | pool + coverage", figures=None, note="a|b")
    table = leaderboard({"refusalsByKind": {OFF_TOPIC: 3}, "rows": [row]}, [{}])
    assert broken_rows(table) == [] and "choose pool \\| pool + coverage" in table
