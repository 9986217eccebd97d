"""LangChain both ways (``pip install nomad-lab[langchain]``): record a vector store's or retriever's pools
over golden suites, and apply a saved gate as a document compressor.

A vector store answers with ``similarity_search_with_score`` (its score is the candidate's ``score`` and,
being the raw similarity, its ``semanticScore``); any other retriever's documents must carry their score
in ``metadata["score"]``. Document ids come from ``metadata[doc_id_key]``, chunk ids from
``metadata[chunk_id_key]`` or the document's ``id``. ``langchain_core`` is imported inside functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.golden_suites import GATING_SUITES
from nomad_lab.frameworks.passages import passage_metadata
from nomad_lab.frameworks.recorder import Candidate, record_pools
from nomad_lab.gate.runtime import NOTE_KEY, apply_check, load


def embeddings(embedder: Any) -> Any:
    """This package's embedder (``retrieval.embedding.load_embedder``) as LangChain ``Embeddings``."""
    from langchain_core.embeddings import Embeddings  # heavy: the langchain extra

    class NomadEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [list(map(float, v)) for v in embedder.embed(texts, kind="document")]

        def embed_query(self, text: str) -> list[float]:
            return [float(v) for v in embedder.embed([text], kind="query")[0]]

    return NomadEmbeddings()


def langchain_retrieve(
    source: Any, k: int = 15, doc_id_key: str = "doc_id", chunk_id_key: str = "chunk_id"
) -> Callable[[str], list[Candidate]]:
    """A question -> candidates function over a LangChain vector store (scored) or retriever."""

    def candidate(doc: Any, score: float, semantic: float | None) -> Candidate:
        meta = doc.metadata
        if doc_id_key not in meta:
            raise NomadLabError(
                f"langchain recorder: a document lacks metadata[{doc_id_key!r}] (its corpus doc id)"
            )
        out = {
            "docId": meta[doc_id_key],
            "chunkId": str(meta.get(chunk_id_key, doc.id)),
            "text": doc.page_content,
        }
        return {
            **out,
            "score": float(score),
            **({} if semantic is None else {"semanticScore": float(semantic)}),
        }

    def retrieve(question: str) -> list[Candidate]:
        if hasattr(source, "similarity_search_with_score"):
            return [candidate(d, s, s) for d, s in source.similarity_search_with_score(question, k=k)]
        docs = source.invoke(question)
        if any("score" not in d.metadata for d in docs):
            raise NomadLabError("langchain recorder: a retriever's documents need metadata['score']")
        return [candidate(d, d.metadata["score"], d.metadata.get("semanticScore")) for d in docs]

    return retrieve


def record_langchain(
    source: Any,
    goldens_dir: str | Path,
    out: str | Path,
    *,
    suite: str = GATING_SUITES,
    k: int = 15,
    **header: Any,
) -> Path:
    """Record a LangChain vector store's (or retriever's) pools over golden suites as a pool JSONL file."""
    return record_pools(
        langchain_retrieve(source, k),
        goldens_dir,
        out,
        suite=suite,
        header={"stack": {"framework": "langchain"}, **header},
    )


def passages_of(documents: Sequence[Any], score_key: str = "score") -> list[dict[str, Any]]:
    """Documents as the gate runtime reads passages (score from metadata, source as the diversity key)."""
    out = []
    for doc in documents:
        meta = doc.metadata
        if score_key not in meta:
            raise NomadLabError(
                f"gate compressor: a document lacks metadata[{score_key!r}] (its retrieval score)"
            )
        out.append(
            {
                "text": doc.page_content,
                "score": float(meta[score_key]),
                "semanticScore": float(meta.get("semanticScore", meta[score_key])),
                "source": meta.get("source"),
                "scores": meta.get("scores", {}),
            }
        )
    return out


def documents(passages: Sequence[dict[str, Any]]) -> list[Any]:
    """A stored pool's passages (``text``, ``score``, ``semanticScore``, ``source``) as LangChain
    documents carrying what :func:`passages_of` reads back: how a pipeline holds them when the gate runs."""
    from langchain_core.documents import Document  # heavy: the langchain extra

    return [Document(p["text"], metadata=passage_metadata(p)) for p in passages]


def _noted(doc: Any, note: str) -> Any:
    return doc.model_copy(update={"metadata": {**doc.metadata, NOTE_KEY: note}})


def gate_compressor(
    gate_path: str | Path,
    score_key: str = "score",
    embed_query: Callable[[str], Sequence[float]] | None = None,
) -> Any:
    """A LangChain document compressor applying a saved gate: all documents pass, or none. A sufficiency
    check (``gate export sufficiency:... --to json``) reads the documents' text only; with the note
    action its "no" keeps them with the prompt note in ``metadata["sufficiency_note"]``."""
    from langchain_core.documents import BaseDocumentCompressor  # heavy: the langchain extra

    gate = load(gate_path)

    class NomadGateCompressor(BaseDocumentCompressor):
        """Keeps a question's documents when the nomad-lab gate says they are on topic."""

        def compress_documents(
            self, documents: Sequence[Any], query: str, callbacks: Any = None
        ) -> Sequence[Any]:
            checked = apply_check(gate, query, documents, lambda d: d.page_content, _noted)
            if checked is not None:
                return checked
            vector = embed_query(query) if embed_query is not None else None
            passages = passages_of(documents, score_key)
            return list(documents) if passages and gate.keep(query, passages, vector) else []

    return NomadGateCompressor()
