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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
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
from nomad_lab.retrieval.index_kinds import Hit, Search, open_search
from nomad_lab.retrieval.index_kinds.search_exact import ExactSearch
from nomad_lab.retrieval.index_spec import DEFAULT_INDEX_SPEC, IndexSpec, parse_index_spec
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


@dataclass
class RetrievalIndex:
    """A searchable index: chunk records and their unit vectors, row for row, and the search over them
    that ``--index`` names (exact by default; a server's Qdrant collection holds its own chunks)."""

    fingerprint: str
    corpus: Corpus
    chunks: list[ChunkRecord]
    matrix: np.ndarray
    embedder: Embedder
    params: IngestParams
    searcher: Search | None = None
    index_spec: IndexSpec = field(default_factory=lambda: parse_index_spec(DEFAULT_INDEX_SPEC))

    @cached_property
    def search_kind(self) -> Search:
        """The candidate net's search: the one ``--index`` opened, else exact over the matrix."""
        return self.searcher or ExactSearch(self.matrix)

    def dense(self, query_vector: np.ndarray, limit: int, score_threshold: float) -> list[Candidate]:
        """The candidate net: cosine >= threshold, best first (stable on ties), at most ``limit``."""
        if not len(self.chunks) and self.searcher is None:
            return []
        return [
            self._hit_candidate(hit) for hit in self.search_kind.hits(query_vector, limit, score_threshold)
        ]

    def _hit_candidate(self, hit: Hit) -> Candidate:
        if hit.row is not None:
            return self._candidate(self.chunks[hit.row], hit.cosine)
        payload = hit.payload or {}
        keywords = payload.get("keywords") or ""
        source = payload.get("source")
        return Candidate(
            text=str(payload.get("text") or ""),
            semantic_score=hit.cosine,
            source=source,
            keywords=" ".join(keywords) if isinstance(keywords, list) else str(keywords),
            document_id=payload.get("document_id"),
            full_title=payload.get("full_title"),
            section_title=payload.get("section_title"),
            article_title=payload.get("article_title"),
            doc_id=self.corpus.doc_id_for_source(source),
            chunk_id=payload.get("_point_id"),
            chunk_index=payload.get("chunk_index"),
        )

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


EmbedFill = Callable[[Store, "Embedder", dict[str, str], bool], int]
"""How a build embeds what the store lacks: :func:`embed_missing` here, or a Dask runner's batches."""


def chunk_records(corpus: Corpus, params: IngestParams) -> list[ChunkRecord]:
    """Every document cut into its chunks (SPEC §2.6), with keywords and text hash, in corpus order."""
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
    return records


def index_cache_name(fingerprint: str, embedder: Embedder) -> str:
    """What an index kind's built files are named by: the index fingerprint and the embedding model."""
    return f"{fingerprint}-{hashlib.sha256(embedder.model_key.encode()).hexdigest()[:12]}"


def build_index(
    corpus: Corpus,
    store: Store,
    embedder: Embedder,
    progress: bool = True,
    index: str | IndexSpec | None = None,
    fill: EmbedFill | None = None,
) -> tuple[RetrievalIndex, BuildStats]:
    """Load the index of this corpus from the store, or chunk, embed (only unseen text) and store it;
    then open the search ``index`` names over it (exact by default).

    A server's Qdrant collection (``qdrant://...``) is the index itself: nothing is chunked, embedded or
    stored, and the corpus only resolves each hit's source to a document. ``fill`` embeds what the store
    lacks (default: in this process, block by block).
    """
    started = time.perf_counter()
    spec = index if isinstance(index, IndexSpec) else parse_index_spec(index)
    params = ingest_params(embedder)
    fingerprint = corpus_fingerprint(corpus.docs, params)
    if spec.remote:
        empty = np.zeros((0, embedder.dimension), np.float32)
        searcher = open_search(spec, empty, store.path.parent, "")
        stats = BuildStats(fingerprint, len(corpus.docs), 0, 0, 0, time.perf_counter() - started, True)
        return RetrievalIndex(fingerprint, corpus, [], empty, embedder, params, searcher, spec), stats
    stored = store.get_index(fingerprint)
    cached = stored is not None
    if stored is not None and stored.corpus_dir != str(corpus.directory) and not store.read_only:
        store.relocate_index(fingerprint, str(corpus.directory))
    embedded = 0
    if not cached:
        records = chunk_records(corpus, params)
        texts = {r.text_sha256: r.text for r in records}
        embedded = (fill or embed_missing)(store, embedder, texts, progress)
        store.put_index(
            IndexRecord(
                fingerprint=fingerprint,
                corpus_dir=str(corpus.directory),
                doc_count=len(corpus.docs),
                chunk_count=len(records),
                model_key=embedder.model_key,
                params={"parts": params.parts(), "excluded": list(corpus.excluded)},
                build_seconds=time.perf_counter() - started,
            ),
            records,
        )
    chunks, matrix = load_index_rows(store, fingerprint, embedder, corpus)
    searcher = None
    if spec.kind != "exact":
        cache = store.path.parent / "indexes"
        searcher = open_search(spec, matrix, cache, index_cache_name(fingerprint, embedder), chunks)
    stats = BuildStats(
        fingerprint,
        len(corpus.docs),
        len(chunks),
        embedded,
        len(chunks) - embedded,
        time.perf_counter() - started,
        cached,
    )
    return RetrievalIndex(fingerprint, corpus, chunks, matrix, embedder, params, searcher, spec), stats
