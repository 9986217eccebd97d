"""Build the ``pydocs`` corpus: Python tutorial chapters and MDN pages cut into section-sized documents.

Why a second corpus: a gate fitted on the default (survival) corpus must be checked on a corpus it never
saw, in another domain, through the same ``--corpus/--goldens`` commands. This one is programming
documentation, so its refusals include hard near-domain questions (other languages, other libraries).

Deterministic and standard-library only. It reads ``python-tutorial/*.rst.txt`` and ``mdn/*.md`` from
``datasets/sources`` (committed; or the directory given as the first argument) and writes

* ``pydocs/corpus/<id>.md``: one document per section, ids ``py-<chapter>-<section>`` and
  ``mdn-<page>-<section>``;
* ``pydocs/SOURCES.md``: id, title, source lines, licence, size and hash of every document.

A chapter is cut at its sections (reST ``===`` underlines, Markdown ``##``); a section over
``MAX_CHARS`` is cut again at its subsections (``---`` / ``###``); consecutive pieces under
``MIN_CHARS`` are merged, so a document is a few KB and its id names what it answers. Each document is
``# <Chapter>: <Section>``, a blank line, the source's provenance line with the section and source line
range appended, a blank line, then the section text verbatim (reST or Markdown; the MDN YAML front matter
is dropped). The header helpers are :mod:`datasets.build_distractors`'s own.

Usage::

    python datasets/corpora/build_pydocs.py [CORPUS_SOURCES_DIR]
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
OUT = HERE / "pydocs"


def _load_build_distractors() -> ModuleType:
    """``datasets/build_distractors.py`` as a module: it is a script, not a package member."""
    path = HERE.parent / "build_distractors.py"
    spec = importlib.util.spec_from_file_location("build_distractors", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


bd = _load_build_distractors()
DEFAULT_SOURCES = bd.DEFAULT_SOURCES

# Tutorial chapters (file stem -> id part) and MDN pages (file stem -> id part), in output order.
PY_CHAPTERS = {
    "interpreter": "interpreter",
    "controlflow": "controlflow",
    "datastructures": "datastructures",
    "modules": "modules",
    "inputoutput": "inputoutput",
    "errors": "errors",
    "classes": "classes",
    "stdlib": "stdlib",
    "stdlib2": "stdlib2",
    "venv": "venv",
    "floatingpoint": "floatingpoint",
}
MDN_PAGES = {
    "basic_concepts_of_flexbox": "flexbox",
    "control_flow_and_error_handling": "js-control-flow",
    "loops_and_iteration": "js-loops",
    "keyed_collections": "js-keyed-collections",
}
MIN_CHARS, MAX_CHARS = 2000, 6500
SLUG_WORDS = 5
SLUG_STOP = {"a", "an", "and", "the", "with"}
# One heading finder per level (sections, then subsections): body lines -> {line index: title}.
Levels = list[Callable[[list[str]], dict[int, str]]]


@dataclass
class Piece:
    """Lines ``[start, end)`` of a source body and the headings they hold (``titles[0]`` names it)."""

    start: int
    end: int
    titles: list[str]
    intro: bool = False  # a chapter's text before its first section
    head: bool = False  # a section's text before its first subsection: starts a document

    def size(self, lines: list[str]) -> int:
        return len("\n".join(lines[self.start : self.end]))


@dataclass
class Doc:
    doc_id: str
    title: str
    path: Path
    source: str
    licence: str


def rst_heading(lines: list[str], i: int, chars: str) -> str | None:
    """The title if line ``i`` is a reST heading text underlined with one of ``chars``, else None."""
    if i + 1 >= len(lines):
        return None
    text, under = lines[i].rstrip(), lines[i + 1].rstrip()
    if not text or text[0].isspace() or len(under) < 3 or under[0] not in chars:
        return None
    if under != under[0] * len(under) or len(under) < len(text):
        return None
    return clean_title(text)


def md_headings(lines: list[str], prefix: str) -> dict[int, str]:
    """Line index -> title of every Markdown heading starting with ``prefix`` outside code fences."""
    found, fenced = {}, False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith(prefix):
            found[i] = clean_title(line[len(prefix) :])
    return found


def clean_title(text: str) -> str:
    """Drop reST roles and Markdown backticks: ``:keyword:`!if` Statements`` -> ``if Statements``."""
    text = re.sub(r":[a-z]+:`!?([^`<]+?)(?:\s*<[^>]*>)?`", r"\1", text)
    return " ".join(text.replace("`", "").split())


def section_start(lines: list[str], i: int) -> int:
    """Move a section's first line back over its reST overline, ``.. _label:`` targets and blank lines."""
    j = i
    if j > 0 and re.fullmatch(r"([-=*~^])\1{2,}", lines[j - 1].rstrip()):
        j -= 1
    k = j
    while k > 0 and (not lines[k - 1].strip() or re.fullmatch(r"\.\. _[^:]+:", lines[k - 1].strip())):
        k -= 1
        if re.fullmatch(r"\.\. _[^:]+:", lines[k].strip()):
            j = k
    return j


def cut(lines: list[str], piece: Piece, levels: Levels, depth: int) -> list[Piece]:
    """Cut ``piece`` at the headings of ``levels[depth]``; recurse into a part over MAX_CHARS."""
    heads = {i: t for i, t in levels[depth](lines).items() if piece.start < i < piece.end}
    if not heads:
        return [piece]
    starts = [section_start(lines, i) for i in heads]
    bounds = [piece.start, *starts, piece.end]
    parts = [Piece(bounds[0], bounds[1], [piece.titles[0]], intro=depth == 0, head=depth > 0)]
    ends = bounds[2:]
    parts += [Piece(a, b, [t]) for a, b, t in zip(starts, ends, heads.values(), strict=True)]
    out: list[Piece] = []
    for part in parts:
        if part.size(lines) > MAX_CHARS and depth + 1 < len(levels) and part is not parts[0]:
            out += cut(lines, part, levels, depth + 1)
        elif part.size(lines) > 0:
            out.append(part)
    return out


def merge_small(lines: list[str], pieces: list[Piece]) -> list[Piece]:
    """Merge a piece under MIN_CHARS with the piece before or after it while the two fit in MAX_CHARS.

    A section cut into subsections never merges into the section before it, so its id stays its own."""
    merged: list[Piece] = []
    for piece in pieces:
        last = merged[-1] if merged else None
        small = last is not None and min(last.size(lines), piece.size(lines)) < MIN_CHARS
        fits = last is not None and Piece(last.start, piece.end, []).size(lines) <= MAX_CHARS
        if small and fits and (last.intro or not piece.head):
            merged[-1] = Piece(last.start, piece.end, last.titles + piece.titles, last.intro, last.head)
        else:
            merged.append(piece)
    return merged


def slug(text: str, words: int) -> str:
    found = re.findall(r"[a-z0-9]+", text.lower().replace("'", ""))
    return "-".join([w for w in found if w not in SLUG_STOP][:words])


def headings(piece: Piece) -> list[str]:
    """The piece's own headings: a chapter introduction's title is the chapter's, not a section's."""
    return piece.titles[1:] if piece.intro else piece.titles


def doc_id(prefix: str, piece: Piece) -> str:
    """``prefix-<first heading>[-<second heading>]``; a bare chapter introduction is ``prefix-intro``."""
    names = headings(piece)
    if not names:
        return f"{prefix}-intro"
    if len(names) == 1:
        return f"{prefix}-{slug(names[0], SLUG_WORDS)}"
    return f"{prefix}-{slug(names[0], 3)}-{slug(names[1], 3)}"


def with_note(prov: str, note: str) -> str:
    """Append `` | <note>`` to a provenance line, inside its HTML comment when it has one."""
    if prov.endswith("-->"):
        return prov[: -len("-->")].rstrip() + f" | {note} -->"
    return prov + f" | {note}"


def build_file(
    src: Path, corpus_dir: Path, prefix: str, chapter: str, levels: Levels, skip: int
) -> list[Doc]:
    """Write the documents of one source file; ``skip`` body lines (front matter) are left out."""
    prov, body = bd.split_source(src)
    fields = bd.parse_provenance(prov)
    lines = body.splitlines()
    rest = src.read_text(encoding="utf-8").partition("\n")[2]
    first_line = 2 + len(rest) - len(rest.lstrip("\n"))  # 1-based source line of body line 0
    pieces = merge_small(lines, cut(lines, Piece(skip, len(lines), [chapter]), levels, 0))
    docs = []
    for piece in pieces:
        ident = doc_id(prefix, piece)
        section = "; ".join(headings(piece)) or "Introduction"
        title = f"{chapter}: {section}"
        a, b = piece.start + first_line, piece.end + first_line - 1
        note = f"Section: {section} (source lines {a}-{b})"
        text = "\n".join(lines[piece.start : piece.end]).strip("\n") + "\n"
        path = corpus_dir / f"{ident}.md"
        if path.exists():
            raise SystemExit(f"{src}: two sections map to doc id {ident!r}")
        bd.write_doc(path, title, with_note(prov, note), text)
        docs.append(Doc(ident, title, path, f"{fields['source']} lines {a}-{b}", fields["licence"]))
    return docs


def rst_levels() -> Levels:
    def at(chars: str) -> Callable[[list[str]], dict[int, str]]:
        return lambda lines: {i: t for i in range(len(lines)) if (t := rst_heading(lines, i, chars))}

    return [at("="), at("-")]


def md_levels() -> Levels:
    return [lambda lines: md_headings(lines, "## "), lambda lines: md_headings(lines, "### ")]


def front_matter_end(lines: list[str]) -> int:
    """Index of the first line after a leading ``---`` YAML block (0 when there is none)."""
    if lines and lines[0].strip() == "---":
        return lines.index("---", 1) + 1
    return 0


def chapter_title(prov: str) -> str:
    title = bd.parse_provenance(prov)["title"].replace("The Python Tutorial - ", "Python Tutorial - ")
    return " ".join(title.split())


def build(sources: Path, out: Path = OUT) -> list[Doc]:
    """Write ``out/corpus/*.md`` (replacing any there) and return the documents in order."""
    corpus_dir = out / "corpus"
    corpus_dir.mkdir(parents=True, exist_ok=True)
    for old in corpus_dir.glob("*.md"):
        old.unlink()
    docs: list[Doc] = []
    for stem, part in PY_CHAPTERS.items():
        src = sources / "python-tutorial" / f"{stem}.rst.txt"
        prov, _ = bd.split_source(src)
        docs += build_file(src, corpus_dir, f"py-{part}", chapter_title(prov), rst_levels(), 0)
    for stem, part in MDN_PAGES.items():
        src = sources / "mdn" / f"{stem}.md"
        prov, body = bd.split_source(src)
        title = "MDN - " + chapter_title(prov)
        skip = front_matter_end(body.splitlines())
        docs += build_file(src, corpus_dir, f"mdn-{part}", title, md_levels(), skip)
    return docs


def write_sources(docs: list[Doc], out: Path = OUT) -> None:
    lines = [
        "# pydocs corpus sources",
        "",
        "Generated by `python datasets/corpora/build_pydocs.py` from `datasets/sources/` (see its",
        "SOURCES.md for the upstream files). Do not edit the documents by hand: re-run the script.",
        "",
        "| doc id | title | source (lines of the source file) | licence | size (bytes) | sha256[:16] |",
        "|---|---|---|---|---:|---|",
    ]
    for d in docs:
        data = d.path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()[:16]
        lines.append(
            f"| {d.doc_id} | {bd.cell(d.title)} | {bd.cell(d.source)} | {bd.cell(d.licence)} "
            f"| {len(data)} | {digest} |"
        )
    (out / "SOURCES.md").write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")


def main(argv: list[str]) -> int:
    sources = Path(argv[1]).resolve() if len(argv) > 1 else DEFAULT_SOURCES
    if not (sources / "python-tutorial").is_dir() or not (sources / "mdn").is_dir():
        print(f"corpus sources not found (want python-tutorial/ and mdn/): {sources}", file=sys.stderr)
        return 2
    docs = build(sources)
    write_sources(docs)
    for d in docs:
        print(f"{d.path.stat().st_size:>7}  {d.doc_id}")
    print(f"{len(docs)} documents")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
