"""Corpus loading, doc-id resolution and the corpus fingerprint, byte for byte (SPEC §8.6)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from nomad_lab.core.jsfmt import js_json_dumps, js_number
from nomad_lab.data.corpus import (
    REFERENCE_INGEST,
    CorpusError,
    IngestParams,
    corpus_fingerprint,
    doc_id_from_source,
    load_corpus,
    reference_fingerprint,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2, "2"),
        (2.0, "2"),
        (-0.0, "0"),
        (1500, "1500"),
        (0.1, "0.1"),
        (0.62, "0.62"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1.5, "1.5"),
        (123456789.125, "123456789.125"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (0.000001, "0.000001"),
        (1.5e-6, "0.0000015"),
        (1e-7, "1e-7"),
        (-2.5e-8, "-2.5e-8"),
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_numbers_render_like_javascript(value: float, expected: str) -> None:
    assert js_number(value) == expected


def test_json_like_json_stringify_with_indent_2() -> None:
    data = {"a": [1.0, 0.5, None, True], "b": {}, "c": [], "d": 'é\n"x"', "e": float("nan"), "f": {"g": 1e-7}}
    assert js_json_dumps(data) == (
        '{\n  "a": [\n    1,\n    0.5,\n    null,\n    true\n  ],\n  "b": {},\n  "c": [],\n'
        '  "d": "é\\n\\"x\\"",\n  "e": null,\n  "f": {\n    "g": 1e-7\n  }\n}'
    )


def test_reference_parts_in_order() -> None:
    assert REFERENCE_INGEST.parts() == [
        "chunkTokens=1500",
        "chunkOverlapTokens=150",
        "charToTokenRatio=2",
        "embeddingModel=nomic-embed-text:v1.5",
        "embeddingDimension=768",
    ]
    assert (REFERENCE_INGEST.chunk_chars, REFERENCE_INGEST.chunk_overlap_chars) == (3000, 300)


def make_corpus(root: Path) -> Path:
    corpus = root / "corpus"
    corpus.mkdir()
    # raw bytes on purpose: a BOM and CRLF line endings must be hashed as they are, not normalized
    (corpus / "b-water.md").write_bytes(b"# Water\r\n\r\nBoil it.\r\n")
    (corpus / "a-fire.md").write_bytes("\ufeff# Fire\n\nFerro rod — strike down.\n".encode())
    (corpus / "notes.txt").write_text("not a doc")
    (corpus / "sub").mkdir()
    (corpus / "sub" / "nested.md").write_text("not read: the corpus is not recursive")
    return corpus


def test_two_doc_corpus_hash_built_by_hand(tmp_path: Path) -> None:
    corpus = load_corpus(make_corpus(tmp_path))
    assert corpus.doc_ids == ["a-fire", "b-water"]
    by_hand = (
        "chunkTokens=1500\n---\nchunkOverlapTokens=150\n---\ncharToTokenRatio=2\n---\n"
        "embeddingModel=nomic-embed-text:v1.5\n---\nembeddingDimension=768\n---\n"
        "doc=a-fire\n\ufeff# Fire\n\nFerro rod — strike down.\n"
        "\n---\n"
        "doc=b-water\n# Water\r\n\r\nBoil it.\r\n"
    )
    expected = hashlib.sha256(by_hand.encode("utf-8")).hexdigest()[:16]
    assert reference_fingerprint(corpus.docs) == expected
    # order of input does not matter: docs are sorted by id
    assert reference_fingerprint(list(reversed(corpus.docs))) == expected
    assert (
        reference_fingerprint(
            [
                ("b-water", "# Water\r\n\r\nBoil it.\r\n"),
                ("a-fire", "\ufeff# Fire\n\nFerro rod — strike down.\n"),
            ]
        )
        == expected
    )


def test_our_fingerprint_appends_our_parts(tmp_path: Path) -> None:
    corpus = load_corpus(make_corpus(tmp_path))
    ours = IngestParams(
        "sentence-transformers/all-MiniLM-L6-v2", 384, extra=(("chunkChars", 3000), ("ratio", 0.5))
    )
    assert ours.parts()[3:] == [
        "embeddingModel=sentence-transformers/all-MiniLM-L6-v2",
        "embeddingDimension=384",
        "chunkChars=3000",
        "ratio=0.5",
    ]
    fp = corpus_fingerprint(corpus.docs, ours)
    assert len(fp) == 16 and fp != reference_fingerprint(corpus.docs)
    changed = IngestParams(
        "sentence-transformers/all-MiniLM-L6-v2", 384, extra=(("chunkChars", 3000), ("ratio", 1))
    )
    assert corpus_fingerprint(corpus.docs, changed) != fp


def test_distractors_can_be_left_out(tmp_path: Path) -> None:
    root = make_corpus(tmp_path)
    (root / "distractor-walden.md").write_text("# Walden\n")
    full, lean = load_corpus(root), load_corpus(root, include_distractors=False)
    assert full.doc_ids == ["a-fire", "b-water", "distractor-walden"] and full.docs[2].is_distractor
    assert lean.doc_ids == ["a-fire", "b-water"] and lean.excluded == ("distractor-walden",)
    assert lean.all_doc_ids == set(full.doc_ids)
    assert reference_fingerprint(full.docs) != reference_fingerprint(lean.docs)


def test_corpus_errors(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="corpus directory not found"):
        load_corpus(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match=r"no \.md documents"):
        load_corpus(tmp_path / "empty")


def test_doc_id_resolution(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    assert doc_id_from_source(str(corpus / "water.md"), corpus) == "water"
    assert doc_id_from_source(str(corpus / "sub" / ".." / "water.md"), corpus) == "water"  # resolved first
    assert doc_id_from_source(os.path.relpath(corpus / "water.md"), corpus) == "water"
    assert doc_id_from_source(str(corpus / "water.txt"), corpus) is None
    assert doc_id_from_source(str(corpus / ".." / "outside.md"), corpus) is None
    assert (
        doc_id_from_source(str(tmp_path / "corpus-other" / "water.md"), corpus) is None
    )  # prefix + separator
    assert doc_id_from_source(None, corpus) is None and doc_id_from_source("", corpus) is None
