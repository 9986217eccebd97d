"""The rating library ``datasets/corpora/gnucash``: every document is the one ``SOURCES.md`` records (size
and hash), loads with its provenance and licence, and keeps none of the guide's navigation; the builder
dedents a page, drops its repeated title and navigation lines and names its chapter in the title."""

from __future__ import annotations

import hashlib
from pathlib import Path

from nomad_lab.core.workspace import DATASETS_DIR
from nomad_lab.data.corpus import load_corpus
from tests.support.dataset_scripts import load_script

GNUCASH = DATASETS_DIR / "corpora" / "gnucash"
NBSP = "\u00a0"


def test_every_document_is_the_one_its_sources_row_records() -> None:
    build = load_script("corpora/build_gnucash.py")
    rows = [
        line.split(" | ")
        for line in (GNUCASH / "SOURCES.md").read_text().splitlines()
        if line.startswith("| gnucash-")
    ]
    corpus = load_corpus(GNUCASH / "corpus")
    assert len(rows) == len(corpus.docs) == build.COUNT
    for doc_id, _title, source, licence, size, digest in (
        (r[0].lstrip("| "), *r[1:5], r[5][:16]) for r in rows
    ):
        data = (GNUCASH / "corpus" / f"{doc_id}.md").read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()[:16]) == (int(size), digest), doc_id
        assert "/gnucash-guide-en/" in source and licence.startswith("GFDL-1.1-or-later"), doc_id
    for doc in corpus.docs:
        lines = doc.text.splitlines()
        assert lines[0].startswith("# ") and lines[2].startswith("Source: Debian package gnucash-docs")
        assert not any(line.startswith(("<<<", " ", "\t")) for line in lines), doc.doc_id
        assert f"{NBSP}Up{NBSP}" not in doc.text, doc.doc_id


def test_the_builder_dedents_a_page_and_drops_its_navigation(tmp_path: Path) -> None:
    build = load_script("corpora/build_gnucash.py")
    heading = f"8.5.{NBSP}Automobile Loan"
    page = tmp_path / "0123abcd-gnucash-loans-carloan.md"
    page.write_text(
        "# loans_CarLoan.html\n\nSource: x | Licence: y\n\n"
        f"{heading}\n\n{heading}\n<<<{NBSP}Prev{NBSP}Chapter{NBSP}8.{NBSP}Loans{NBSP}Next{NBSP}>>>\n\n{heading}\n"
        "The car loan is treated like the house\n      loan, with other accounts.\n\n"
        f"8.4.{NBSP}House Mortgage{NBSP}Up{NBSP}8.6.{NBSP}A Personal Loan\n",
        encoding="utf-8",
    )
    doc_id, title, provenance, text = build.document(page)
    assert (doc_id, title, provenance) == (
        "gnucash-loans-carloan",
        "Automobile Loan (Loans)",
        "Source: x | Licence: y",
    )
    assert text == (
        "# Automobile Loan (Loans)\n\nSource: x | Licence: y\n\n"
        "The car loan is treated like the house\nloan, with other accounts.\n"
    )
