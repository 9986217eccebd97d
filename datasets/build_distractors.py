"""Build the distractor documents and the library-growth books from ``datasets/sources``.

Deterministic and standard-library only. It writes

* ``datasets/corpus/distractor-<name>.md``: the six long off-topic distractors of the eval corpus
  (Walden, The Adventures of Sherlock Holmes, Pride and Prejudice, the Python tutorial as raw reST,
  MDN "Basic concepts of flexbox", and three MDN JavaScript Guide pages concatenated);
* ``datasets/library_growth/<name>.md``: every other Project Gutenberg book, for studies that grow the
  library a few books at a time;
* ``datasets/SOURCES.md``: provenance, licence, size and hash of every file written above;
* ``datasets/sources/SOURCES.md`` (when it reads the committed sources): licence, size and sha256 of
  every source file it read, so a copy of the sources can be checked against the ones used here.

Each output file is ``# <Title>``, a blank line, the provenance line (the source file's first line,
or a composed one for the concatenations), a blank line, then the text. A body larger than
``MAX_BODY_BYTES`` (UTF-8) is cut to a contiguous excerpt from the start of the body, ending at a
paragraph break, and the provenance line says ``excerpt: first N characters``.

Usage::

    python datasets/build_distractors.py [CORPUS_SOURCES_DIR]

The default source directory is ``datasets/sources`` (committed: the public-domain Gutenberg books,
the PSF-licensed Python tutorial and the CC-BY-SA MDN pages this script reads, nothing else).
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

DATASETS = Path(__file__).resolve().parent
DEFAULT_SOURCES = DATASETS / "sources"
SOURCE_FOLDERS = ("gutenberg", "python-tutorial", "mdn")

# Body cap in UTF-8 bytes. With the two header lines every file stays well under 190 KB.
MAX_BODY_BYTES = 180_000

# The three Gutenberg books that are distractors in the eval corpus; every other book goes to
# library_growth/.
GUTENBERG_DISTRACTORS = {
    "walden": "distractor-walden",
    "sherlock-holmes": "distractor-sherlock-holmes",
    "pride-and-prejudice": "distractor-pride-and-prejudice",
}
MDN_JS_GUIDE_PAGES = ["control_flow_and_error_handling", "loops_and_iteration", "keyed_collections"]


@dataclass
class Built:
    """One written file and the provenance fields shown in SOURCES.md."""

    path: Path
    title: str
    author: str
    source: str
    licence: str


def parse_provenance(line: str) -> dict[str, str]:
    """Parse ``Title: … | Author: … | Source: … | Licence: …`` from a provenance header line."""
    text = line.strip()
    text = re.sub(r"^(#|\.\.|<!--)\s*", "", text)
    text = re.sub(r"\s*-->$", "", text)
    text = re.sub(r"^Provenance:\s*", "", text)
    fields: dict[str, str] = {}
    for part in text.split(" | "):
        key, sep, value = part.partition(":")
        if sep:
            fields[key.strip().lower()] = value.strip()
    return fields


def split_source(path: Path) -> tuple[str, str]:
    """Return (provenance line, body) of a source file; the body loses its leading blank lines."""
    text = path.read_text(encoding="utf-8")
    first, _, rest = text.partition("\n")
    return first.rstrip(), rest.lstrip("\n").rstrip() + "\n"


def excerpt(body: str) -> tuple[str, int | None]:
    """Cut ``body`` to at most MAX_BODY_BYTES at a paragraph break; return (text, N chars or None)."""
    raw = body.encode("utf-8")
    if len(raw) <= MAX_BODY_BYTES:
        return body, None
    cut = raw[:MAX_BODY_BYTES].decode("utf-8", errors="ignore")
    para = cut.rfind("\n\n")
    if para > 0:
        cut = cut[:para]
    cut = cut.rstrip()
    return cut + "\n", len(cut)


def with_excerpt_note(prov: str, n_chars: int | None) -> str:
    """Append ``| excerpt: first N characters`` to a provenance line (inside an HTML comment)."""
    if n_chars is None:
        return prov
    note = f" | excerpt: first {n_chars} characters of the body"
    if prov.endswith("-->"):
        return prov[: -len("-->")].rstrip() + note + " -->"
    return prov + note


def write_doc(path: Path, title: str, prov: str, body: str) -> tuple[str, int | None]:
    """Write ``# title``, blank, provenance (+ excerpt note), blank, body. Returns (prov, n)."""
    text, n_chars = excerpt(body)
    prov = with_excerpt_note(prov, n_chars)
    path.write_text(f"# {title}\n\n{prov}\n\n{text}", encoding="utf-8", newline="\n")
    return prov, n_chars


def gutenberg_book(src: Path, out: Path) -> Built:
    prov, body = split_source(src)
    fields = parse_provenance(prov)
    write_doc(out, fields["title"], prov, body)
    return Built(out, fields["title"], fields["author"], fields["source"], fields["licence"])


def python_tutorial_order(tut: Path) -> list[Path]:
    """Tutorial files in toctree order (index first), then any unlisted file in name order."""
    index = tut / "index.rst.txt"
    names = ["index"]
    in_toc = False
    for line in index.read_text(encoding="utf-8").splitlines():
        if line.strip().startswith(".. toctree::"):
            in_toc = True
            continue
        if in_toc:
            entry = line.strip()
            if entry.endswith(".rst"):
                names.append(entry[: -len(".rst")])
            elif entry and not entry.startswith(":"):
                in_toc = False
    ordered = [tut / f"{n}.rst.txt" for n in dict.fromkeys(names) if (tut / f"{n}.rst.txt").exists()]
    rest = sorted(p for p in tut.glob("*.rst.txt") if p not in ordered)
    return ordered + rest


def concatenation(paths: list[Path], title: str, rst: bool) -> tuple[str, str, dict[str, str]]:
    """Concatenate whole source files (each keeps its own provenance line) and compose a header."""
    first = parse_provenance(paths[0].read_text(encoding="utf-8").partition("\n")[0])
    parts = [p.read_text(encoding="utf-8").rstrip() + "\n" for p in paths]
    body = "\n\n".join(parts)
    names = ", ".join(p.name for p in paths)
    if rst:
        folder = first["source"].rsplit("/", 1)[0]
        source = f"{folder}/ ({len(paths)} files concatenated in tutorial order: {names})"
    else:
        source = f"github.com/mdn/content ({len(paths)} files concatenated: {names})"
    fields = {"title": title, "author": first["author"], "source": source, "licence": first["licence"]}
    core = (
        f"Provenance: Title: {title} | Author: {fields['author']} | Source: {source}"
        f" (each part keeps its own provenance line) | Licence: {fields['licence']}"
    )
    prov = f".. {core}" if rst else f"<!-- {core} -->"
    return prov, body, fields


def build(sources: Path, out: Path = DATASETS) -> list[Built]:
    """Write every distractor and library-growth file under ``out``; return them in SOURCES.md order."""
    corpus_dir, growth_dir = out / "corpus", out / "library_growth"
    corpus_dir.mkdir(parents=True, exist_ok=True)
    growth_dir.mkdir(parents=True, exist_ok=True)
    built: list[Built] = []
    gut = sources / "gutenberg"
    for name, doc_id in GUTENBERG_DISTRACTORS.items():
        built.append(gutenberg_book(gut / f"{name}.txt", corpus_dir / f"{doc_id}.md"))

    tut_paths = python_tutorial_order(sources / "python-tutorial")
    prov, body, f = concatenation(tut_paths, "The Python Tutorial", rst=True)
    path = corpus_dir / "distractor-python-tutorial.md"
    write_doc(path, f["title"], prov, body)
    built.append(Built(path, f["title"], f["author"], f["source"], f["licence"]))

    mdn = sources / "mdn"
    prov, body = split_source(mdn / "basic_concepts_of_flexbox.md")
    f = parse_provenance(prov)
    path = corpus_dir / "distractor-mdn-flexbox.md"
    write_doc(path, f["title"], prov, body)
    built.append(Built(path, f["title"], f["author"], f["source"], f["licence"]))

    title = "JavaScript Guide: Control flow and error handling; Loops and iteration; Keyed collections"
    prov, body, f = concatenation([mdn / f"{p}.md" for p in MDN_JS_GUIDE_PAGES], title, rst=False)
    path = corpus_dir / "distractor-mdn-javascript-guide.md"
    write_doc(path, f["title"], prov, body)
    built.append(Built(path, f["title"], f["author"], f["source"], f["licence"]))

    for src in sorted(gut.glob("*.txt")):
        if src.stem in GUTENBERG_DISTRACTORS:
            continue
        built.append(gutenberg_book(src, growth_dir / f"{src.stem}.md"))
    return built


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def write_sources(built: list[Built], out: Path = DATASETS) -> None:
    lines = [
        "# Dataset sources",
        "",
        "Domain documents in `corpus/` (every file not named `distractor-*.md`) and all golden suites are",
        "original text written for nomad-lab (licence: same as the project, MIT). Fictional equipment,",
        "protocols and places in them are invented and do not describe real products.",
        "",
        "The files below are generated by `python datasets/build_distractors.py` from",
        "`sources/` (see `sources/SOURCES.md` for the upstream files). Each is `# <Title>`,",
        "a blank line, the provenance line, a blank line, then the text; bodies over 180,000 UTF-8 bytes",
        "are cut to a contiguous excerpt from the start (ending at a paragraph break) and say so in the",
        "provenance line. Do not edit them by hand: re-run the script.",
        "",
        "| file | title | author | source | licence | size (bytes) | sha256[:16] |",
        "|---|---|---|---|---|---:|---|",
    ]
    for b in built:
        data = b.path.read_bytes()
        rel = b.path.relative_to(out).as_posix()
        digest = hashlib.sha256(data).hexdigest()[:16]
        lines.append(
            f"| {rel} | {cell(b.title)} | {cell(b.author)} | {cell(b.source)} | {cell(b.licence)} "
            f"| {len(data)} | {digest} |"
        )
    (out / "SOURCES.md").write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")


def source_list(sources: Path) -> str:
    """``sources/SOURCES.md``: licence, size and full sha256 of every source file, from its own header."""
    lines = [
        "# Corpus sources",
        "",
        "The public texts `datasets/build_distractors.py` and `datasets/corpora/build_pydocs.py` read,",
        "committed so the datasets rebuild from this repository alone (regenerated by",
        "`build_distractors.py`; a test rebuilds both and compares). Each file's first line is its",
        "provenance: title, author, upstream source and licence. All three licences allow redistribution:",
        "",
        "- `gutenberg/`: Project Gutenberg books, public domain in the USA; the Project Gutenberg",
        "  licence and trademark header and footer are removed, as that licence asks of copies that do",
        "  not carry the trademark. The text is otherwise as published.",
        "- `python-tutorial/`: the Python 3.11 tutorial sources (reST) as packaged by Debian, unchanged",
        "  below the provenance line; PSF License Version 2, whose agreement and copyright notice are in",
        "  `licences/PSF-2.0.txt` as the licence requires (code examples also 0BSD).",
        "- `mdn/`: MDN Web Docs pages by Mozilla Contributors, unchanged below the provenance line; CC-BY-SA",
        "  2.5 (https://creativecommons.org/licenses/by-sa/2.5/). Attribution is the provenance line (author",
        "  and source commit); documents derived from them in `corpus/` and `corpora/pydocs/` carry the",
        "  same licence in their own provenance lines.",
        "",
        "| file | title | licence | size (bytes) | sha256 |",
        "|---|---|---|---:|---|",
    ]
    for folder in SOURCE_FOLDERS:
        for path in sorted((sources / folder).iterdir()):
            data = path.read_bytes()
            fields = parse_provenance(data.decode("utf-8").partition("\n")[0])
            lines.append(
                f"| {folder}/{path.name} | {cell(fields['title'])} | {cell(fields['licence'])} "
                f"| {len(data)} | {hashlib.sha256(data).hexdigest()} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    sources = Path(argv[1]).resolve() if len(argv) > 1 else DEFAULT_SOURCES
    if not (sources / "gutenberg").is_dir():
        print(f"corpus sources not found: {sources}", file=sys.stderr)
        return 2
    built = build(sources)
    write_sources(built)
    if sources == DEFAULT_SOURCES:
        (sources / "SOURCES.md").write_text(source_list(sources), encoding="utf-8", newline="\n")
    for b in built:
        print(f"{b.path.stat().st_size:>8}  {b.path.relative_to(DATASETS).as_posix()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
