"""``datasets/build_distractors.py`` rebuilds the distractors, the library-growth books and both source
lists byte for byte from the committed ``datasets/sources``: the datasets need nothing outside the clone.
"""

from __future__ import annotations

from pathlib import Path

from nomad_lab.core.workspace import DATASETS_DIR
from tests.support.dataset_scripts import load_script

SOURCES = DATASETS_DIR / "sources"


def committed(folder: Path, pattern: str) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.glob(pattern)}


def test_the_committed_distractors_and_books_are_what_the_builder_writes(tmp_path: Path) -> None:
    build = load_script("build_distractors.py")
    assert build.DEFAULT_SOURCES == SOURCES
    build.write_sources(build.build(SOURCES, tmp_path), tmp_path)
    assert committed(tmp_path / "corpus", "*.md") == committed(DATASETS_DIR / "corpus", "distractor-*.md")
    assert committed(tmp_path / "library_growth", "*.md") == committed(
        DATASETS_DIR / "library_growth", "*.md"
    )
    assert (tmp_path / "SOURCES.md").read_bytes() == (DATASETS_DIR / "SOURCES.md").read_bytes()


def test_every_source_file_is_listed_with_a_redistributable_licence_and_its_hash() -> None:
    """The list is regenerated from the files themselves, so a changed or added file shows up here."""
    build = load_script("build_distractors.py")
    assert build.source_list(SOURCES) == (SOURCES / "SOURCES.md").read_text(encoding="utf-8")
    rows = [
        line.split(" | ") for line in (SOURCES / "SOURCES.md").read_text().splitlines() if line[:2] == "| "
    ]
    licences = {row[2] for row in rows[1:]}
    assert licences == {
        "Public domain in the USA (Project Gutenberg licence/trademark boilerplate removed)",
        "PSF License Version 2 (Python 3.11 documentation)",
        "CC-BY-SA 2.5",
    }
    assert (
        "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2" in (SOURCES / "licences" / "PSF-2.0.txt").read_text()
    )
    listed = {row[0].removeprefix("| ") for row in rows[1:]}
    on_disk = {p.relative_to(SOURCES).as_posix() for p in SOURCES.rglob("*") if p.is_file()}
    assert on_disk - listed == {"SOURCES.md", "licences/PSF-2.0.txt"}
