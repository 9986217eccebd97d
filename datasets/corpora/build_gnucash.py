"""Build the ``gnucash`` corpus: sections of the GnuCash Tutorial and Concepts Guide, for rating drafts blind.

Why: a drafter is judged on a library nobody tuned it on (issue 43). The handbook corpus was rated once,
and its verdicts were read when the drafter's checks changed after it; this is personal and business
accounting prose (accounts, loans, investments, budgets) from another Debian package, read by none of
the drafter's checks, its prompt or its tuning runs (the default corpus and pydocs).

Deterministic and standard-library only, the handbook's pattern (``build_handbook.py``). It reads the
guide's sections from a library built by ``nomad-lab library build ... --source ... gnucash ...``
(``runs/library-large``, or the directory given as the first argument): ``<hash>-gnucash-<name>.md``,
each a page's HTML as text, from ``/usr/share/doc/gnucash-docs/gnucash-guide-en/``. It takes :data:`COUNT`
of the guide's sections of :data:`MIN_BYTES` to :data:`MAX_BYTES`, leaving out the pages that are not
the guide's prose (:data:`NOT_PROSE`: the title page, the glossary, the licence's sections), a seeded
sample, and writes

* ``gnucash/corpus/gnucash-<name>.md``: ``# <section title> (<chapter>)`` (numbers dropped; the chapter
  from the page's navigation line, as the guide's many "Putting It All Together" and "Basic Concepts"
  sections name no subject without it), a blank line, the
  library file's provenance line, a blank line, then the text with each line's leading whitespace, the
  repeated section title lines and the two navigation lines (``<<< Prev ... Next >>>`` at the top, the
  ``... Up ...`` line at the end) removed. Why dedented: the library's text keeps the HTML's indentation
  (a paragraph's wrapped lines are indented), which a Markdown reader (and the drafter) takes for code
  blocks, so no sentence of it would be read as prose. No other character is changed.
* ``gnucash/SOURCES.md``: id, title, source, licence, size and hash of every document.

Usage::

    python datasets/corpora/build_gnucash.py [LIBRARY_DIR]
"""

from __future__ import annotations

import hashlib
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "gnucash"
DEFAULT_LIBRARY = HERE.parents[1] / "runs" / "library-large"
COUNT, SEED = 18, 1341
MIN_BYTES, MAX_BYTES = 4000, 12000
"""Sections this size hold a few paragraphs each: 18 of them are about 130 KB."""
GUIDE = "/gnucash-guide-en/"
"""The Tutorial and Concepts Guide (prose), not the Help manual (a reference of the windows and menus)."""
NOT_PROSE = re.compile(r"^(titlepage|gnc-gloss|fdl-.*|index|authors)$")
_FILE = re.compile(r"^[0-9a-f]{8}-gnucash-(.+)\.md$")
_NUMBER = re.compile(r"^(?:(?:Chapter|Part|Appendix)\s+)?[\dA-Z]+(?:\.\d+)*\.\s+")
_NAVIGATION_TOP = re.compile(r"^<<<\s*(?:Prev\s+)?(.*?)\s*(?:Next\s*)?>>>$")
_NAVIGATION_END = re.compile(r"\sUp\s")


def _guide_sections(library: Path) -> list[Path]:
    out = []
    for path in sorted(library.iterdir()):
        match = _FILE.match(path.name)
        if not match or NOT_PROSE.match(match.group(1)):
            continue
        if not MIN_BYTES <= path.stat().st_size <= MAX_BYTES:
            continue
        with path.open(encoding="utf-8") as handle:
            provenance = [handle.readline() for _ in range(3)][2]
        if GUIDE in provenance:
            out.append(path)
    return out


def chosen(library: Path) -> list[Path]:
    """The seeded sample of the library's guide sections in the size range, in name order."""
    files = _guide_sections(library)
    if len(files) < COUNT:
        raise SystemExit(f"{library}: {len(files)} GnuCash guide sections of {MIN_BYTES}-{MAX_BYTES} bytes")
    return sorted(random.Random(SEED).sample(files, COUNT), key=lambda p: _FILE.match(p.name).group(1))


def document(path: Path) -> tuple[str, str, str, str]:
    """(doc id, title, provenance line, document text) of one library file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    provenance = lines[2]
    body = [line.strip() for line in lines[3:]]
    heading = next(line for line in body if line)
    title = _NUMBER.sub("", heading)
    top = next((m for line in body if (m := _NAVIGATION_TOP.match(line))), None)
    chapter = _NUMBER.sub("", top.group(1)) if top else ""
    if chapter and chapter != title:
        title = f"{title} ({chapter})"
    kept = [line for line in body if line != heading and not _NAVIGATION_TOP.match(line)]
    last = max(i for i, line in enumerate(kept) if line)
    if _NAVIGATION_END.search(kept[last]):
        del kept[last]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    doc_id = "gnucash-" + _FILE.match(path.name).group(1)
    return doc_id, title, provenance, f"# {title}\n\n{provenance}\n\n{text}\n"


def main(argv: list[str]) -> int:
    library = Path(argv[0]) if argv else DEFAULT_LIBRARY
    corpus = OUT / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    rows = [
        "# gnucash corpus sources",
        "",
        "Generated by `python datasets/corpora/build_gnucash.py` from the GnuCash guide's sections of",
        "a library built by `nomad-lab library build` (`runs/library-large`). Do not edit the documents",
        "by hand.",
        "",
        "| doc id | title | source | licence | size (bytes) | sha256[:16] |",
        "|---|---|---|---|---:|---|",
    ]
    for path in chosen(library):
        doc_id, title, provenance, text = document(path)
        data = text.encode("utf-8")
        (corpus / f"{doc_id}.md").write_bytes(data)
        source, licence = (part.split(": ", 1)[1] for part in provenance.split(" | "))
        digest = hashlib.sha256(data).hexdigest()[:16]
        rows.append(f"| {doc_id} | {title} | {source} | {licence} | {len(data)} | {digest} |")
    (OUT / "SOURCES.md").write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"wrote {COUNT} documents to {corpus}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
