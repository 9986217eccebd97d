"""A stored pool as each framework holds it (LangChain documents, LlamaIndex scored nodes) reads back as
the same passages through the adapters' own reader: what the adapter tests and the gate bundle benchmark
feed the compressor and the postprocessor is the pool ``gate apply`` scores."""

from __future__ import annotations

from nomad_lab.frameworks import langchain, llamaindex

POOL = [
    {
        "text": "Apply a tourniquet above the wound.",
        "score": 0.71,
        "semanticScore": 0.64,
        "source": "bleeding",
    },
    {"text": "Knead the dough for ten minutes.", "score": 0.42, "semanticScore": 0.45, "source": "bread"},
]


def test_a_pool_reads_back_from_langchain_documents_and_llamaindex_nodes() -> None:
    expected = [{**p, "scores": {}} for p in POOL]
    assert langchain.passages_of(langchain.documents(POOL), "score") == expected
    assert llamaindex.passages_of(llamaindex.nodes(POOL)) == expected
    assert [n.score for n in llamaindex.nodes(POOL)] == [0.71, 0.42]  # the retriever's score on the node
