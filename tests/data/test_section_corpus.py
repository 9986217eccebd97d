"""The section corpora's writer: each section a document, and SOURCES.md recording its source, licence,
size and hash as the corpus tests read them back."""

from __future__ import annotations

import hashlib
from pathlib import Path

from nomad_lab.data.section_corpus import write_section_corpus


def test_each_section_is_written_and_recorded_with_its_hash(tmp_path: Path) -> None:
    sections = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for path in sections:
        path.write_text(path.stem * 3)

    def document(path: Path) -> tuple[str, str, str, str]:
        provenance = f"Source: pkg/{path.name} | Licence: GFDL"
        return f"doc-{path.stem}", path.stem.upper(), provenance, f"# {path.stem}\n\n{provenance}\n\nbody é\n"

    out = tmp_path / "out"
    assert write_section_corpus(out, ["# sources", "", "Made by a test."], sections, document) == 2
    lines = (out / "SOURCES.md").read_text().splitlines()
    assert lines[:3] == ["# sources", "", "Made by a test."]
    data = (out / "corpus" / "doc-b.md").read_bytes()
    digest = hashlib.sha256(data).hexdigest()[:16]
    assert lines[-1] == f"| doc-b | B | pkg/b.txt | GFDL | {len(data)} | {digest} |"
    assert len(data) == len((out / "corpus" / "doc-b.md").read_text()) + 1  # bytes, not characters
    assert sorted(p.name for p in (out / "corpus").iterdir()) == ["doc-a.md", "doc-b.md"]
