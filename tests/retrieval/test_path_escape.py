"""Names read from files never become paths outside the directory they belong to.

Golden doc ids and dump doc ids are refused at load (``tests/test_bad_input_cli.py`` drives both through
the CLI). This module covers the two other ways in: chunk sources stored in a (possibly crafted) store,
which must resolve to "no corpus document" rather than to a file outside the corpus, and the corpus
fingerprint and kind of a report file, which ``eval compare`` turns into a baseline path.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from nomad_lab.cli import main
from nomad_lab.data.corpus import load_corpus
from nomad_lab.retrieval.index import RetrievalIndex, load_index_rows
from nomad_lab.store import EMBEDDING_DIMENSION, ChunkRecord, IndexRecord, Store
from tests.support.paths import RETRIEVAL_FIXTURES as FIXTURES


def test_stored_chunk_sources_outside_the_corpus_resolve_to_no_document(tmp_path: Path) -> None:
    corpus = load_corpus(FIXTURES / "corpus")
    outside = tmp_path / "secret.md"
    outside.write_text("a secret outside the corpus")
    hostile = {  # doc_id as stored -> source as stored
        "water-boiling": str(corpus.directory / "water-boiling.md"),  # the one honest chunk
        "../secret": str(outside),
        "/etc/passwd": "/etc/passwd.md",
        "dotdot": str(corpus.directory / ".." / "secret.md"),
        "relative": os.path.relpath(outside),
        "sibling": str(corpus.directory) + "-evil/water-boiling.md",  # shares the prefix, not the dir
    }
    chunks = [
        ChunkRecord(f"{doc_id}#0", doc_id, source, 0, 1, f"text of {doc_id}", "", 10, f"sha-{i}")
        for i, (doc_id, source) in enumerate(hostile.items())
    ]
    embedder = SimpleNamespace(model_key="stub", name="stub", dimension=EMBEDDING_DIMENSION)
    vectors = np.random.default_rng(0).normal(size=(len(chunks), EMBEDDING_DIMENSION)).astype(np.float32)
    with Store(tmp_path / "crafted.duckdb") as store:
        store.put_embeddings("stub", [c.text_sha256 for c in chunks], vectors)
        store.put_index(IndexRecord("0" * 16, "/elsewhere", 6, 6, "stub", {}), chunks)
        loaded, matrix = load_index_rows(store, "0" * 16, embedder, corpus)
    index = RetrievalIndex("0" * 16, corpus, loaded, matrix, embedder, None)  # type: ignore[arg-type]
    found = {c.chunk_id: c for c in index.dense(vectors.sum(axis=0), len(chunks), -1.0)}
    assert found["water-boiling#0"].doc_id == "water-boiling"
    escaped = [c for c in found.values() if c.chunk_id != "water-boiling#0"]
    assert len(escaped) == 5 and all(c.doc_id is None for c in escaped)  # counted as unresolved leaks
    assert all(c.text == f"text of {c.chunk_id[:-2]}" for c in found.values())  # text from the store only


def _report(tmp_path: Path, **meta: str) -> Path:
    path = tmp_path / "report.json"
    base = {"kind": "retrieval", "corpusFingerprint": "1f06a1bd627a1fd7"}
    path.write_text(json.dumps({"meta": {**base, **meta}, "metrics": {"recall@5": 1.0}}))
    return path


@pytest.mark.parametrize(
    ("meta", "extra", "needle"),
    [
        ({"corpusFingerprint": "../../x"}, ["--promote", "retrieval"], "corpus fingerprint '../../x'"),
        ({"corpusFingerprint": "/tmp"}, [], "corpus fingerprint '/tmp'"),
        ({}, ["--promote", "../../escaped"], "baseline name '../../escaped' contains a path separator"),
        ({"kind": "../../escaped"}, [], "baseline name '../../escaped' contains a path separator"),
    ],
)
def test_a_report_cannot_point_eval_compare_outside_the_baselines_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], meta: dict, extra: list[str], needle: str
) -> None:
    baselines = tmp_path / "a" / "b" / "baselines"
    baselines.mkdir(parents=True)
    report = _report(tmp_path, **meta)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    digest = hashlib.sha256(report.read_bytes()).hexdigest()
    assert main(["eval", "compare", str(report), "--baselines-dir", str(baselines), *extra]) == 1
    err = capsys.readouterr().err
    assert err.startswith("nomad-lab: error: ") and needle in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing written
    assert hashlib.sha256(report.read_bytes()).hexdigest() == digest
