"""Real retrieval over the eval corpus: index once per fingerprint, then search like the reference.

Ingest (SPEC §2.6): each document is cut by chonkie's ``TokenChunker`` on a character tokenizer into
3,000-character chunks overlapping by 300, each chunk sanitized, its keyword payload extracted, and its
text embedded (all of it: see ``nomad_lab.retrieval.embedding``). The index lives in the workspace
store under the corpus fingerprint; a second build finds it and embeds nothing.

Search (SPEC §2.2–2.4): expand the query, extract its keywords, embed it, take the candidate net (cosine
>= 0.3, at most top_k*3 by cosine), then rerank, floor, diversify and slice
(``nomad_lab.gate.reference_ranking``).

Differences from the reference, all deliberate: cosine is computed with numpy over the stored matrix
(exact, where Qdrant's HNSW is approximate); chonkie here counts Python code points where chonkie-js
counts UTF-16 units (differs only for astral characters); ``search_*`` prefixes only for the models
trained with them (see ``embedder_spec.PREFIX_TABLE``; MiniLM takes none);
the reference's per-chunk 1,591-token truncation never fires at 3,000 characters and is not applied.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from nomad_lab.core.reference import (
    CANDIDATE_MULTIPLIER,
    RAG_DEFAULT_SCORE_THRESHOLD,
    RAG_DEFAULT_TOP_K,
    RAG_MIN_FINAL_SCORE,
)
from nomad_lab.data.corpus import Corpus, IngestParams, corpus_fingerprint
from nomad_lab.gate.keywords import (
    MAX_SAFE_TOKENS,
    STOPWORDS_SOURCE,
    extract_keywords,
    ingest_keywords,
    preprocess_query,
    sanitize_text,
    truncate_to_tokens,
)
from nomad_lab.gate.reference_ranking import Candidate, RankedResult, rank_candidates
from nomad_lab.retrieval.embedder_spec import EmbedderError
from nomad_lab.store import ChunkRecord, IndexRecord, Store

if TYPE_CHECKING:
    from nomad_lab.retrieval.embedding import Embedder

__all__ = ["BuildStats", "RetrievalIndex", "build_index", "chunk_text", "ingest_params"]

CHUNKER_NAME = "chonkie.TokenChunker(tokenizer=character)"
EMBED_BLOCK = 256  # chunks embedded, then committed, at a time: a Ctrl-C loses at most one block


def ingest_params(embedder: Embedder) -> IngestParams:
    """nomad-lab's fingerprint parameters: the reference's five, our model, then our own ingest choices."""
    base = IngestParams(embedding_model=embedder.name, embedding_dimension=embedder.dimension)
    return IngestParams(
        embedding_model=embedder.name,
        embedding_dimension=embedder.dimension,
        extra=(
            ("chunker", CHUNKER_NAME),
            ("chunkChars", base.chunk_chars),
            ("chunkOverlapChars", base.chunk_overlap_chars),
            ("embeddingPackage", embedder.model_version),
            ("longChunkEmbedding", embedder.method),
            ("stopwords", STOPWORDS_SOURCE),
        ),
    )


def check_cached_dimension(store: Store, embedder: Embedder) -> None:
    """Refuse, before anything is embedded or written, an embedder whose vectors differ in dimension from
    the ones the store already holds under its model key (the model behind a name changed)."""

    cached = store.embedding_dimension(embedder.model_key)
    if cached is not None and cached != embedder.dimension:
        raise EmbedderError(
            f"embedder {embedder.spec.text}: returns {embedder.dimension}-dimensional vectors but "
            f"{store.path} holds {cached}-dimensional ones under the same model key; nothing was "
            "overwritten (pass ?version=... in the spec to key the new model apart, or use another --store)"
        )


def embed_missing(
    store: Store,
    embedder: Embedder,
    texts: dict[str, str],
    progress: bool = True,
    desc: str = "embedding chunks",
) -> int:
    """Embed the texts (by sha256) the store has no vector for under this embedder; commit block by block.

    Never embeds a text twice: the cache is keyed by (model key, text sha256), and each block is committed
    as soon as it is embedded, so an interrupted build resumes where it stopped. Returns how many were new.
    """
    from tqdm.auto import tqdm  # heavy

    check_cached_dimension(store, embedder)
    cached = store.cached_embedding_keys(embedder.model_key, texts)
    todo = [(sha, text) for sha, text in texts.items() if sha not in cached]
    with tqdm(total=len(todo), desc=desc, unit="chunk", disable=not progress or not todo) as bar:
        for begin in range(0, len(todo), EMBED_BLOCK):
            block = todo[begin : begin + EMBED_BLOCK]
            vectors = embedder.embed([text for _, text in block])
            store.put_embeddings(embedder.model_key, [sha for sha, _ in block], vectors)
            bar.update(len(block))
    return len(todo)


CHUNK_CHARS = 3000
"""The longest chunk, in characters; the docs pages quote it."""


def chunk_text(text: str, chunk_chars: int = CHUNK_CHARS, overlap_chars: int = 300) -> list[str]:
    """``chunk_chars``-character windows stepping by ``chunk_chars - overlap_chars``; sanitized."""
    from chonkie import TokenChunker  # heavy

    chunker = TokenChunker(tokenizer="character", chunk_size=chunk_chars, chunk_overlap=overlap_chars)
    pieces = (sanitize_text(chunk.text) for chunk in chunker.chunk(text))
    return [piece for piece in pieces if piece]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


@dataclass(frozen=True)
class BuildStats:
    """What an index build did: ``embedded`` new vectors, ``reused`` cached ones, wall ``seconds``."""

    fingerprint: str
    docs: int
    chunks: int
    embedded: int
    reused: int
    seconds: float
    cached_index: bool


def top_stable(scores: np.ndarray, limit: int, threshold: float) -> list[int]:
    """Indices of the ``limit`` best scores >= ``threshold``, best first, lower index first on ties.

    Exactly ``np.argsort(-scores, kind="stable")[:limit]`` filtered by the threshold, without sorting
    every row: a partition finds the ``limit``-th best score, and only the rows at or above it (ties at
    the boundary included) are sorted. At 10^5 chunks this is what keeps a query in milliseconds.
    """
    if limit <= 0 or not len(scores):
        return []
    if limit < len(scores):
        cut = np.partition(scores, len(scores) - limit)[len(scores) - limit]
        candidates = np.flatnonzero(scores >= max(cut, threshold))
    else:
        candidates = np.flatnonzero(scores >= threshold)
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    return [int(i) for i in order[:limit]]


@dataclass
class RetrievalIndex:
    """A searchable index: chunk records and their unit vectors, row for row."""

    fingerprint: str
    corpus: Corpus
    chunks: list[ChunkRecord]
    matrix: np.ndarray
    embedder: Embedder
    params: IngestParams

    @cached_property
    def row_norms(self) -> np.ndarray:
        """Each stored vector's length, computed once per index rather than once per query."""
        return np.linalg.norm(self.matrix, axis=1)

    def dense(self, query_vector: np.ndarray, limit: int, score_threshold: float) -> list[Candidate]:
        """The candidate net: cosine >= threshold, best first (stable on ties), at most ``limit``."""
        if not len(self.chunks):
            return []
        norms = self.row_norms * max(float(np.linalg.norm(query_vector)), 1e-12)
        cosines = (self.matrix @ query_vector) / np.maximum(norms, 1e-12)
        return [
            self._candidate(self.chunks[i], float(cosines[i]))
            for i in top_stable(cosines, limit, score_threshold)
        ]

    def _candidate(self, chunk: ChunkRecord, cosine: float) -> Candidate:
        return Candidate(
            text=chunk.text,
            semantic_score=cosine,
            source=chunk.source,
            keywords=chunk.keywords,
            doc_id=self.corpus.doc_id_for_source(chunk.source),
            chunk_id=chunk.chunk_id,
            chunk_index=chunk.chunk_index,
        )

    def embed_queries(self, queries: Sequence[str], progress: bool = False) -> np.ndarray:
        """Embed the expanded, length-guarded form of each query (what the reference embeds)."""
        texts = query_texts(self.embedder, queries)
        return self.embedder.embed(texts, progress=progress, desc="embedding queries", kind="query")

    def search(
        self,
        query: str,
        top_k: int = RAG_DEFAULT_TOP_K,
        score_threshold: float = RAG_DEFAULT_SCORE_THRESHOLD,
        min_final_score: float = RAG_MIN_FINAL_SCORE,
        query_vector: np.ndarray | None = None,
    ) -> RankedResult:
        """Net, rerank, floor, diversity, top_k; the result carries the floor stats and every stage."""
        if query_vector is None:
            query_vector = self.embed_queries([query])[0]
        dense = self.dense(query_vector, top_k * CANDIDATE_MULTIPLIER, score_threshold)
        keywords = extract_keywords(preprocess_query(query))
        return rank_candidates(dense, keywords, query, limit=top_k, min_final_score=min_final_score)


def query_texts(embedder: Embedder, queries: Sequence[str]) -> list[str]:
    """The text retrieval embeds for each query: expanded, then cut to the embedder's safe length."""
    budget = MAX_SAFE_TOKENS - math.ceil(len(embedder.prefixes[0]) / 2)
    return [truncate_to_tokens(preprocess_query(q), budget) for q in queries]


def _query_key(text: str) -> str:
    return hashlib.sha256(("query\x00" + text).encode()).hexdigest()  # never a document's text hash


def stored_query_vectors(
    store: Store, embedder: Embedder, queries: Sequence[str], progress: bool = False
) -> np.ndarray:
    """Each query's vector (of its :func:`query_texts` form), from the store's embedding cache where it
    holds one; the rest embedded in their order and cached (unless the store is read-only).

    Why cached: retrieval embeds a suite's questions, and every gate that reads query vectors, every
    later run of the same suite and every study over the run asks for the very same vectors again."""
    texts = query_texts(embedder, queries)
    keys = [_query_key(t) for t in texts]
    cached = store.get_embeddings(embedder.model_key, keys)
    todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in cached}
    if todo:
        texts = list(todo.values())
        vectors = embedder.embed(texts, progress=progress, desc="embedding queries", kind="query")
        if not store.read_only:
            store.put_embeddings(embedder.model_key, list(todo), vectors)
        cached.update(zip(todo, vectors, strict=True))
    return np.stack([cached[k] for k in keys]) if keys else np.zeros((0, embedder.dimension), np.float32)


def load_index_rows(
    store: Store, fingerprint: str, embedder: Embedder, corpus: Corpus
) -> tuple[list[ChunkRecord], np.ndarray]:
    """The stored index, with each chunk's source re-pointed at this corpus directory.

    The fingerprint covers doc ids and texts but not where the corpus lives, so an index built in another
    checkout (or a test's temporary directory) is reused, and its sources must resolve here.
    """
    chunks, matrix = store.index_matrix(fingerprint, embedder.model_key)
    paths = {doc.doc_id: sanitize_text(str(doc.path)) for doc in corpus.docs}
    return [replace(c, source=paths.get(c.doc_id, c.source)) for c in chunks], matrix


def build_index(
    corpus: Corpus, store: Store, embedder: Embedder, progress: bool = True
) -> tuple[RetrievalIndex, BuildStats]:
    """Load the index of this corpus from the store, or chunk, embed (only unseen text) and store it."""
    started = time.perf_counter()
    params = ingest_params(embedder)
    fingerprint = corpus_fingerprint(corpus.docs, params)
    if store.get_index(fingerprint) is not None:
        chunks, matrix = load_index_rows(store, fingerprint, embedder, corpus)
        stats = BuildStats(
            fingerprint, len(corpus.docs), len(chunks), 0, len(chunks), time.perf_counter() - started, True
        )
        return RetrievalIndex(fingerprint, corpus, chunks, matrix, embedder, params), stats

    records: list[ChunkRecord] = []
    for doc in corpus.docs:
        pieces = chunk_text(doc.text, params.chunk_chars, params.chunk_overlap_chars)
        source = sanitize_text(str(doc.path))
        for index, piece in enumerate(pieces):
            records.append(
                ChunkRecord(
                    chunk_id=f"{doc.doc_id}#{index}",
                    doc_id=doc.doc_id,
                    source=source,
                    chunk_index=index,
                    total_chunks=len(pieces),
                    text=piece,
                    keywords=ingest_keywords(piece),
                    char_count=len(piece),
                    text_sha256=_sha256(piece),
                )
            )
    embedded = embed_missing(store, embedder, {r.text_sha256: r.text for r in records}, progress)
    seconds = time.perf_counter() - started
    store.put_index(
        IndexRecord(
            fingerprint=fingerprint,
            corpus_dir=str(corpus.directory),
            doc_count=len(corpus.docs),
            chunk_count=len(records),
            model_key=embedder.model_key,
            params={"parts": params.parts(), "excluded": list(corpus.excluded)},
            build_seconds=seconds,
        ),
        records,
    )
    chunks, matrix = load_index_rows(store, fingerprint, embedder, corpus)
    stats = BuildStats(
        fingerprint,
        len(corpus.docs),
        len(chunks),
        embedded,
        len(records) - embedded,
        time.perf_counter() - started,
        False,
    )
    return RetrievalIndex(fingerprint, corpus, chunks, matrix, embedder, params), stats
