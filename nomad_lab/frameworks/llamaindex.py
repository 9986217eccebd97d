"""LlamaIndex both ways (``pip install nomad-lab[llamaindex]``): record a retriever's pools over golden
suites, and apply a saved gate as a node postprocessor.

A retriever answers with ``NodeWithScore`` (its score is the candidate's ``score`` and, from a vector
index, its raw similarity: ``semanticScore``); document ids come from ``node.metadata[doc_id_key]``,
chunk ids from the node id. ``llama_index.core`` is imported inside functions.
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


def embedding_model(embedder: Any) -> Any:
    """This package's embedder (``retrieval.embedding.load_embedder``) as a LlamaIndex embedding model."""
    from llama_index.core.embeddings import BaseEmbedding  # heavy: the llamaindex extra

    def one(text: str, kind: str) -> list[float]:
        return [float(v) for v in embedder.embed([text], kind=kind)[0]]

    class NomadEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return one(query, "query")

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return one(query, "query")

        def _get_text_embedding(self, text: str) -> list[float]:
            return one(text, "document")

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return [[float(v) for v in row] for row in embedder.embed(texts, kind="document")]

    return NomadEmbedding(model_name=getattr(embedder, "model_key", "nomad-lab"), embed_batch_size=64)


def llamaindex_retrieve(retriever: Any, doc_id_key: str = "doc_id") -> Callable[[str], list[Candidate]]:
    """A question -> candidates function over a LlamaIndex retriever."""

    def retrieve(question: str) -> list[Candidate]:
        out = []
        for hit in retriever.retrieve(question):
            meta = hit.node.metadata
            if doc_id_key not in meta:
                raise NomadLabError(
                    f"llamaindex recorder: a node lacks metadata[{doc_id_key!r}] (its corpus doc id)"
                )
            if hit.score is None:
                raise NomadLabError("llamaindex recorder: the retriever returned a node without a score")
            text = hit.node.get_content()
            score = float(hit.score)
            out.append(
                {
                    "docId": meta[doc_id_key],
                    "chunkId": hit.node.node_id,
                    "text": text,
                    "score": score,
                    "semanticScore": score,
                }
            )
        return out

    return retrieve


def record_llamaindex(
    retriever: Any, goldens_dir: str | Path, out: str | Path, *, suite: str = GATING_SUITES, **header: Any
) -> Path:
    """Record a LlamaIndex retriever's pools over golden suites as a pool JSONL file."""
    return record_pools(
        llamaindex_retrieve(retriever),
        goldens_dir,
        out,
        suite=suite,
        header={"stack": {"framework": "llamaindex"}, **header},
    )


def passages_of(nodes: Sequence[Any]) -> list[dict[str, Any]]:
    """Scored nodes as the gate runtime reads passages (the node's score, its source as diversity key)."""
    out = []
    for hit in nodes:
        if hit.score is None:
            raise NomadLabError("gate postprocessor: a node has no score (the gate reads retrieval scores)")
        meta = hit.node.metadata
        out.append(
            {
                "text": hit.node.get_content(),
                "score": float(hit.score),
                "semanticScore": float(meta.get("semanticScore", hit.score)),
                "source": meta.get("source"),
                "scores": meta.get("scores", {}),
            }
        )
    return out


def nodes(passages: Sequence[dict[str, Any]]) -> list[Any]:
    """A stored pool's passages as LlamaIndex scored nodes (the score on the node, raw cosine and source
    as metadata): what :func:`passages_of` reads back, as a query engine holds them when the gate runs."""
    from llama_index.core.schema import NodeWithScore, TextNode  # heavy: the llamaindex extra

    return [
        NodeWithScore(node=TextNode(text=p["text"], metadata=passage_metadata(p)), score=p["score"])
        for p in passages
    ]


def _noted(hit: Any, note: str) -> Any:
    node = hit.node.model_copy(update={"metadata": {**hit.node.metadata, NOTE_KEY: note}})
    return type(hit)(node=node, score=hit.score)


def gate_postprocessor(
    gate_path: str | Path, embed_query: Callable[[str], Sequence[float]] | None = None
) -> Any:
    """A LlamaIndex node postprocessor applying a saved gate: all nodes pass, or none. A sufficiency
    check (``gate export sufficiency:... --to json``) reads the nodes' text only; with the note action
    its "no" keeps them with the prompt note in ``node.metadata["sufficiency_note"]``."""
    from llama_index.core.postprocessor.types import BaseNodePostprocessor  # heavy: the llamaindex extra

    gate = load(gate_path)

    class NomadGatePostprocessor(BaseNodePostprocessor):
        """Keeps a question's nodes when the nomad-lab gate says they are on topic."""

        def _postprocess_nodes(self, nodes: list[Any], query_bundle: Any = None) -> list[Any]:
            if query_bundle is None:
                raise NomadLabError("gate postprocessor: the gate reads the question; pass a query bundle")
            question = query_bundle.query_str
            checked = apply_check(gate, question, nodes, lambda hit: hit.node.get_content(), _noted)
            if checked is not None:
                return checked
            vector = embed_query(question) if embed_query is not None else None
            passages = passages_of(nodes)
            return list(nodes) if passages and gate.keep(question, passages, vector) else []

    return NomadGatePostprocessor()
