"""A corpus of a library's sections written as documents, with the SOURCES.md that records each one.

Why one place: the handbook and GnuCash corpora (``datasets/corpora/build_handbook.py``,
``build_gnucash.py``) are both sections picked from a library built by ``nomad-lab library build``, each
written as a document that carries its provenance line, and both record every document's source,
licence, size and hash the same way, which their tests read back. Standard library only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

Document = Callable[[Path], tuple[str, str, str, str]]
"""A section file -> (doc id, title, provenance line 'Source: ... | Licence: ...', document text)."""


def write_section_corpus(
    out: Path, header: Sequence[str], sections: Iterable[Path], document: Document
) -> int:
    """Write each section as ``out/corpus/DOC_ID.md`` and the table of them to ``out/SOURCES.md`` (the
    ``header`` lines first); returns how many documents were written."""
    corpus = out / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    table = [
        *header,
        "",
        "| doc id | title | source | licence | size (bytes) | sha256[:16] |",
        "|---|---|---|---|---:|---|",
    ]
    documents: list[str] = []
    for path in sections:
        doc_id, title, provenance, text = document(path)
        data = text.encode("utf-8")
        (corpus / f"{doc_id}.md").write_bytes(data)
        source, licence = (part.split(": ", 1)[1] for part in provenance.split(" | "))
        digest = hashlib.sha256(data).hexdigest()[:16]
        documents.append(f"| {doc_id} | {title} | {source} | {licence} | {len(data)} | {digest} |")
    (out / "SOURCES.md").write_text("\n".join([*table, *documents]) + "\n", encoding="utf-8")
    print(f"wrote {len(documents)} documents to {corpus}")
    return len(documents)
