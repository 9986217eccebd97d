"""The framework extras both ways, in the real frameworks: a LangChain in-memory vector store and a
LlamaIndex vector index over the default corpus (this package's MiniLM embedder) record pool files that
import and run through ``study gates``; the gate as a LangChain document compressor and a LlamaIndex node
postprocessor keeps exactly the questions ``gate apply`` keeps, on the stored pools of both corpora."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.core.workspace import DEFAULT_GOLDENS_DIR
from nomad_lab.data.pool_jsonl import read_pool_jsonl
from nomad_lab.store import Store
from tests.gate_export.conftest import CORPORA, Fitted, adapters_keep, applied

pytestmark = pytest.mark.slow


def corpus_chunks(run: Fitted) -> list:
    with Store(run.store, read_only=True) as store:
        return store.get_chunks(store.get_run(run.run).fingerprint)


def imports_and_ranks(
    pools: Path, workspace: Fitted, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[dict, Path, str]:
    """``store import`` of the recorded file into a copy of ``workspace``'s store, then ``study gates`` on
    it; the leaderboard's rows by name, the store and the run. The copy is a workspace that retrieved the
    same questions with the same embedder: the gates' query features read their vectors from its cache
    (after the recorded run's embedder identity is checked), as a second gather on any store does."""
    store = tmp_path / "recorded.duckdb"
    shutil.copy(workspace.store, store)
    assert main(["store", "import", str(pools), "--store", str(store)]) == 0
    run_id = capsys.readouterr().out.split(" as run ")[1].split()[0]
    out = tmp_path / "gates"
    argv = ["study", "gates", "--run", run_id, "--store", str(store), "--no-ce", "--no-bank", "--folds", "2"]
    assert main([*argv, "--repeats", "1", "--out", str(out)]) == 0
    return {r["gate"]: r for r in json.loads((out / "gates.json").read_text())["rows"]}, store, run_id


def check_recorded(pools: Path, framework: str) -> None:
    columns = read_pool_jsonl(pools)
    assert columns.header["stack"]["framework"] == framework
    assert columns.size > 300 and set(columns.columns) == {"chunkId", "text", "semanticScore"}
    assert (columns.offsets[1:] - columns.offsets[:-1]).max() == 15
    answerable = [i for i, kind in enumerate(columns.kinds) if kind is None]
    top = [columns.doc_id[columns.offsets[i]] for i in answerable]
    hits = sum(doc in columns.relevant[i] for doc, i in zip(top, answerable, strict=True))
    assert hits / len(answerable) > 0.5  # a real retriever: its best passage is mostly a relevant one


def test_langchain_records_pools_that_study_gates_ranks(
    fitted: dict[str, Fitted], corpus_embedder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from nomad_lab.frameworks.langchain import embeddings, record_langchain

    chunks = corpus_chunks(fitted["default"])
    store = InMemoryVectorStore(embedding=embeddings(corpus_embedder))
    docs = [
        Document(c.text, metadata={"doc_id": c.doc_id, "chunk_id": c.chunk_id, "source": c.source})
        for c in chunks
    ]
    store.add_documents(docs, ids=[c.chunk_id for c in chunks])
    pools = record_langchain(
        store, DEFAULT_GOLDENS_DIR, tmp_path / "langchain.jsonl", embedder=corpus_embedder.identity()
    )
    check_recorded(pools, "langchain")
    rows, recorded, run_id = imports_and_ranks(pools, fitted["default"], tmp_path, capsys)
    assert rows["floor (swept)"]["rocAuc"][0] > 0.5 and "learned: pool + query" in rows
    round_trip(recorded, run_id, tmp_path)


def round_trip(store: Path, run_id: str, tmp_path: Path) -> None:
    """docs/pools.md's last steps on the recorded run: fit, export (TypeScript and the runtime's JSON),
    and the gate in the pipeline (Node, the LangChain compressor) decides as ``gate apply`` does."""
    from langchain_core.documents import Document

    from nomad_lab.frameworks.langchain import gate_compressor
    from tests.gate_export.conftest import pipeline_questions
    from tests.gate_export.test_gate_export import node_scores

    gate = tmp_path / "gate.json"
    fit = ["gate", "fit", "--run", run_id, "--store", str(store), "--out", str(gate), "--no-bank"]
    assert main([*fit, "--features", "pool,coverage", "--folds", "2", "--repeats", "1"]) == 0
    scores = tmp_path / "applied.json"
    assert (
        main(["gate", "apply", str(gate), "--run", run_id, "--store", str(store), "--scores", str(scores)])
        == 0
    )
    python = json.loads(scores.read_text())
    export = ["gate", "export", str(gate), "--store", str(store)]
    assert main([*export, "--to", "ts", "--out", str(tmp_path / "gate.ts")]) == 0
    assert main([*export, "--to", "json", "--out", str(tmp_path / "portable.json")]) == 0
    questions = pipeline_questions(store, run_id)
    ts = node_scores(tmp_path / "gate.ts", questions, tmp_path)
    compressor = gate_compressor(tmp_path / "portable.json")
    for q in questions:
        keep = python["scores"][q["id"]] >= python["threshold"]
        assert abs(ts[q["id"]]["score"] - python["scores"][q["id"]]) <= 1e-9 and ts[q["id"]]["keep"] == keep
        meta = [{k: p[k] for k in ("score", "semanticScore", "source")} for p in q["passages"]]
        docs = [Document(p["text"], metadata=m) for p, m in zip(q["passages"], meta, strict=True)]
        assert bool(compressor.compress_documents(docs, q["question"])) == (keep and bool(docs))


def test_llamaindex_records_pools_that_study_gates_ranks(
    fitted: dict[str, Fitted], corpus_embedder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode

    from nomad_lab.frameworks.llamaindex import embedding_model, record_llamaindex

    chunks = corpus_chunks(fitted["default"])
    keys = ["doc_id", "source"]  # LlamaIndex embeds metadata with the text unless told not to
    nodes = [
        TextNode(
            id_=c.chunk_id,
            text=c.text,
            metadata={"doc_id": c.doc_id, "source": c.source},
            excluded_embed_metadata_keys=keys,
        )
        for c in chunks
    ]
    index = VectorStoreIndex(nodes, embed_model=embedding_model(corpus_embedder))
    retriever = index.as_retriever(similarity_top_k=15)
    pools = record_llamaindex(
        retriever, DEFAULT_GOLDENS_DIR, tmp_path / "llamaindex.jsonl", embedder=corpus_embedder.identity()
    )
    check_recorded(pools, "llamaindex")
    rows, _, _ = imports_and_ranks(pools, fitted["default"], tmp_path, capsys)
    assert rows["floor (swept)"]["rocAuc"][0] > 0.5 and "learned: pool + query" in rows


@pytest.mark.parametrize("corpus", list(CORPORA))
@pytest.mark.parametrize("kinds", ["pool", "pool,coverage"])
def test_the_adapters_keep_what_gate_apply_keeps(
    fitted: dict[str, Fitted], corpus: str, kinds: str, tmp_path: Path
) -> None:

    from nomad_lab.frameworks.langchain import gate_compressor
    from nomad_lab.frameworks.llamaindex import gate_postprocessor

    run = fitted[corpus]
    python = applied(run, kinds)
    portable = tmp_path / "gate.json"
    assert (
        main(
            [
                "gate",
                "export",
                str(run.gates[kinds]),
                "--to",
                "json",
                "--store",
                str(run.store),
                "--out",
                str(portable),
            ]
        )
        == 0
    )
    compressor, postprocessor = gate_compressor(portable), gate_postprocessor(portable)
    decided = {True: 0, False: 0}
    for q in run.questions:
        expected = bool(q["passages"]) and python["scores"][q["id"]] >= python["threshold"]
        assert adapters_keep(compressor, postprocessor, q) == (expected, expected), q["id"]
        decided[expected] += 1
    assert decided[True] and decided[False]
