"""What a page may say outside its markers: no measurement typed by hand, no citation that cannot be found.

Why: the markers (:mod:`nomad_lab.publish.docs`) only check what sits inside them. A figure typed
beside them (``0.47``, ``34%``, ``18.5 %``, ``2.3x``, ``2.34 ×``, ``about 1,742 tokens``, ``16 s``,
``n = 19``, or any number in a heading) would go stale unseen, so :func:`unmarked` finds every
number of those shapes outside markers, code and link targets. Two ways remain to write one:

- a setting the page repeats (the seed's 0.62 floor, a 5% target) is declared once, from where it is
  defined: ``<!-- given nomad_lab/core/reference.py#RAG_MIN_FINAL_SCORE fmt=.2f -->``; the page may
  then write the rendered text (``0.62``) anywhere, and a changed constant makes every use stand out;
- a figure quoted from a source that is not a result here names it precisely, and the source is read:
  ``<!-- cited git:e12d534^:results/estimator/summary.md -->32.1%<!-- /cited -->`` (a file of the
  repository, or ``git:REV:PATH``) passes only when every number quoted appears in that source.

Bare small counts ("3 pairs", "4 of 32 layers") are words, not measurements, and pass.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

GIVEN = re.compile(r"<!-- given (?P<spec>[^>]*?) -->")
CITED = re.compile(r"<!-- cited (?P<source>[^>]*?) -->(?P<text>.*?)<!-- /cited -->", re.S)
MARKED = re.compile(r"<!-- (fig|claim|cited) .*?<!-- /\1 -->|<!-- table .*?<!-- /table -->|<!--.*?-->", re.S)
NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
UNIT = r"\s?(?:%|[x×](?![\w])|(?:s|ms|µs|MB/s|MB|GB|KB|tokens?|calls?|passages?)\b)"
MEASURE = re.compile(
    rf"(?<![\w.@/:#§])(?<![A-Za-z]-)(?P<n>\bn\s?=\s?\d+|(?:{NUMBER})(?:{UNIT})?)(?![\w@]|[.,]\d)"
)
"""A number as written, with its unit if any. In a heading any number is a measurement; elsewhere all
but a bare integer (a decimal, a percentage, a ratio, one with a unit or thousands separators, a
sample size ``n = 19``)."""
VERSION = re.compile(r"Python\s$")


def _blank(match: re.Match[str]) -> str:
    return "\n" * match.group(0).count("\n")


def prose(text: str) -> str:
    """``text`` with markers, comments, code blocks, code spans and link targets blanked, lines kept."""
    text = MARKED.sub(_blank, text)
    text = re.sub(r"```.*?```", _blank, text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.sub(r"\]\([^)\s]*\)", "]", text)


def unmarked(text: str, allowed: frozenset[str] = frozenset()) -> Iterator[tuple[int, str]]:
    """(line, number) of each measurement-shaped number outside markers, code and links, unless its
    text is one the page declared as given (``allowed``)."""
    for line_number, line in enumerate(prose(text).splitlines(), start=1):
        if line.startswith("    "):  # an indented code block
            continue
        heading = line.startswith("#")
        for match in MEASURE.finditer(line):
            found = match.group("n")
            if VERSION.search(line[: match.start()]) and "." in found and not heading:
                continue
            if (heading or not found.isdigit()) and not _given(found, allowed):
                yield line_number, found


def _given(found: str, allowed: frozenset[str]) -> bool:
    """Whether ``found`` is a declared setting as written (``5%``, ``5 %``), or its number followed by a
    unit of measure (``420 s`` for a given ``420``; a percentage or ratio must match whole)."""
    if found in allowed or found.replace(" ", "") in allowed:
        return True
    number = re.match(NUMBER, found)
    return number is not None and number.group(0) in allowed and not re.search(r"[%x×]$", found)


def cited(text: str, root: Path) -> Iterator[tuple[int, str]]:
    """(line, problem) for each citation whose source cannot be read or does not hold a number it quotes."""
    for match in CITED.finditer(text):
        source, line = match.group("source").strip(), text.count("\n", 0, match.start()) + 1
        body = _source_text(source, root)
        if body is None:
            yield line, f"cited source {source!r} is not a file of the repository or git:REV:PATH"
            continue
        body = re.sub(r"(?<=\d)[_,](?=\d{3})", "", body)  # 24_000 and 24,000 read as 24000
        for number in re.findall(rf"(?<![\w@.])(?:{NUMBER})", match.group("text")):
            plain = number.replace(",", "")
            if not re.search(rf"(?<![\d.]){re.escape(plain)}(?![\d])", body):
                yield line, f"{number} is not in its cited source {source!r}"


def _source_text(source: str, root: Path) -> str | None:
    if source.startswith("git:"):
        try:
            done = subprocess.run(
                ["git", "show", source.removeprefix("git:")],
                cwd=root,
                capture_output=True,
                text=True,
                check=False,
            )
        except OSError:
            return None
        return done.stdout if done.returncode == 0 else None
    path = root / source
    return path.read_text(encoding="utf-8") if path.is_file() and root in path.resolve().parents else None
