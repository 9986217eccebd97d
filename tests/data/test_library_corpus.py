"""The library builder: what it reads from a package's files, what it writes, and its provenance."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.library_corpus import (
    MANIFEST_NAME,
    MIN_DOC_BYTES,
    LibrarySource,
    build_library,
    html_text,
    package_files,
)

PROSE = "The kernel schedules tasks on every processor and balances their load. " * 12


def _package(root: Path) -> list[Path]:
    """A documentation package's installed files: gzip, HTML, a stub too short to keep, a stray."""
    docs = root / "usr/share/doc/pkg/Documentation"
    docs.mkdir(parents=True)
    (docs / "sched.rst.gz").write_bytes(gzip.compress(f"Scheduling\n==========\n\n{PROSE}".encode()))
    (docs / "index.en.html").write_text(
        f"<html><head><style>p {{color: red}}</style><script>var x = 1;</script></head>"
        f"<body><h1>Memory</h1><p>{PROSE}</p><p>caf&eacute; &amp; more</p></body></html>"
    )
    (docs / "stub.rst.gz").write_bytes(gzip.compress(b"See elsewhere."))
    (docs / "logo.svg").write_text("<svg/>")
    return sorted(p for p in root.rglob("*") if p.is_file())


SOURCE = LibrarySource("pkg", "pkg-doc", r"/Documentation/.*\.(rst\.gz|en\.html)$", "GPL-2.0")


def test_build_writes_text_with_provenance_and_a_manifest(tmp_path: Path) -> None:
    files = _package(tmp_path / "root")
    out = tmp_path / "library"
    library = build_library(out, [SOURCE], files_of=lambda package: ("1.2-3", files), progress=False)
    assert library.skipped_short == 1  # the stub, under MIN_DOC_BYTES
    assert [s["files"] for s in library.sources] == [2] and library.sources[0]["version"] == "1.2-3"
    written = sorted(out.glob("*.md"))
    assert len(written) == 2 and all("-pkg-" in p.name for p in written)
    texts = {p.name: p.read_text() for p in written}
    sched = next(t for t in texts.values() if "Scheduling" in t)
    assert "Source: Debian package pkg-doc 1.2-3, " in sched and "Licence: GPL-2.0" in sched
    page = next(t for t in texts.values() if "Memory" in t)
    assert "color: red" not in page and "var x" not in page and "café & more" in page
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["total_bytes"] == sum(p.stat().st_size for p in written) == library.total_bytes
    for doc in manifest["documents"]:
        assert hashlib.sha256((out / doc["file"]).read_bytes()).hexdigest() == doc["sha256"]
    assert len(load_corpus(out).docs) == 2  # a usable corpus folder


def test_rebuild_is_byte_identical_and_drops_what_left(tmp_path: Path) -> None:
    files = _package(tmp_path / "root")
    out = tmp_path / "library"
    build_library(out, [SOURCE], files_of=lambda package: ("1", files), progress=False)
    before = {p.name: p.read_bytes() for p in out.glob("*.md")}
    (out / "old-doc.md").write_text("# left over from another build\n")
    html = [p for p in files if p.suffix == ".html"]
    build_library(out, [SOURCE], files_of=lambda package: ("1", files), progress=False)
    assert {p.name: p.read_bytes() for p in out.glob("*.md")} == before
    build_library(out, [SOURCE], files_of=lambda package: ("1", [p for p in files if p not in html]))
    assert len(list(out.glob("*.md"))) == 1


def test_a_missing_package_names_itself_and_the_fix() -> None:
    with pytest.raises(NomadLabError, match=r"no-such-doc-package: not installed .*apt-get install"):
        package_files("no-such-doc-package")


def test_html_text_keeps_paragraphs_apart() -> None:
    assert (
        html_text("<p>one</p><p>two</p>") == "one\n\ntwo" or html_text("<p>one</p><p>two</p>") == "one\ntwo"
    )


def test_cli_builds_from_a_folder_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "books"
    folder.mkdir()
    (folder / "walden.txt").write_text("Walden\n\n" + PROSE)
    (folder / "short.md").write_text("tiny")
    out = tmp_path / "library"
    assert (
        main(["library", "build", "--source", "--add", str(folder), "--out", str(out), "--no-progress"]) == 0
    )
    printed = capsys.readouterr().out
    assert "1 documents" in printed and f"1 files under {MIN_DOC_BYTES} bytes skipped" in printed
    written = list(out.glob("*.md"))
    assert [p.name.split("-", 1)[1] for p in written] == ["books-walden.md"]
    assert "Source: books/walden.txt | Licence:" in written[0].read_text()  # not the absolute path


def test_repeated_navigation_is_stripped_and_source_listings_excluded(tmp_path: Path) -> None:
    from nomad_lab.data.library_corpus import REPEATED_MIN_PAGES, strip_repeated_lines

    root = tmp_path / "root" / "usr/share/doc/gen/html"
    (root / "src").mkdir(parents=True)
    pages = REPEATED_MIN_PAGES + 5
    for i in range(pages):
        body = f"<p>Search</p><p>Settings</p><h1>Item {i}</h1><p>{PROSE} number {i}.</p>"
        (root / f"page{i}.html").write_text(f"<html><body>{body}</body></html>")
    (root / "src" / "lib.rs.html").write_text(f"<html><body><pre>fn main() {{}} {PROSE}</pre></body></html>")
    files = sorted(p for p in (tmp_path / "root").rglob("*") if p.is_file())
    source = LibrarySource("gen", "gen-doc", r"/html/.*\.html$", "MIT", r"/html/src/", True)
    library = build_library(tmp_path / "lib", [source], files_of=lambda package: ("1", files), progress=False)
    texts = [p.read_text() for p in sorted((tmp_path / "lib").glob("*.md"))]
    assert len(texts) == pages  # the source listing is left out
    assert all("Search" not in t and "Settings" not in t for t in texts)
    assert all("Item" in t and "balances their load" in t for t in texts)
    (row,) = library.sources
    assert row["bytesBeforeStrip"] > sum(len(t.split("Licence: MIT\n\n", 1)[1]) for t in texts)
    few = strip_repeated_lines(["Search\nalpha", "Search\nbeta"])  # two pages: nothing is "repeated"
    assert few == ["Search\nalpha", "Search\nbeta"]
