"""The eval corpus: its documents, doc-id resolution and the corpus fingerprint (SPEC §8.6).

The fingerprint names "this corpus, chunked and embedded this way": baselines live under it, the index
is cached under it, and two reports are comparable only when theirs match. The reference recipe is kept
byte for byte (:func:`reference_fingerprint` reproduces ``51e642964facf251`` given the reference corpus);
nomad-lab's own fingerprint uses the same recipe with its own ingest parameters appended, so a change of
embedding model, chunker, long-chunk method or stop-word list yields a new fingerprint and a new index.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.jsfmt import js_number
from nomad_lab.data.golden_suites import check_doc_id

__all__ = [
    "DISTRACTOR_PREFIX",
    "REFERENCE_INGEST",
    "Corpus",
    "CorpusDoc",
    "CorpusError",
    "IngestParams",
    "compute_fingerprint",
    "corpus_fingerprint",
    "doc_id_from_source",
    "is_fingerprint",
    "load_corpus",
    "reference_fingerprint",
]

DISTRACTOR_PREFIX = "distractor-"
DOC_SUFFIX = ".md"
FINGERPRINT_SEPARATOR = "\n---\n"
FINGERPRINT_HEX_CHARS = 16
_FINGERPRINT = re.compile(rf"^[0-9a-f]{{{FINGERPRINT_HEX_CHARS}}}$")


def is_fingerprint(value: object) -> bool:
    """A corpus fingerprint as we write it: 16 lowercase hex characters. Checked wherever one read from a
    file becomes part of a path (baselines are stored under it), so it can never hold ``..`` or ``/``."""
    return isinstance(value, str) and bool(_FINGERPRINT.match(value))


class CorpusError(NomadLabError, ValueError):
    """The corpus directory is missing, empty, or holds a file whose name is not a usable doc id."""


@dataclass(frozen=True)
class CorpusDoc:
    """One markdown document: ``text`` is the raw file text (UTF-8, line endings untouched, as hashed)."""

    doc_id: str
    path: Path
    text: str

    @property
    def is_distractor(self) -> bool:
        return self.doc_id.startswith(DISTRACTOR_PREFIX)


@dataclass(frozen=True)
class Corpus:
    """The documents of a corpus directory, sorted by file name; ``excluded`` lists doc ids left out."""

    directory: Path
    docs: tuple[CorpusDoc, ...]
    excluded: tuple[str, ...] = ()

    @property
    def doc_ids(self) -> list[str]:
        return [doc.doc_id for doc in self.docs]

    @property
    def all_doc_ids(self) -> set[str]:
        """Every doc id in the directory, including excluded ones (goldens are validated against these)."""
        return {*self.doc_ids, *self.excluded}

    def doc_id_for_source(self, source: str | None) -> str | None:
        return doc_id_from_source(source, self.directory)


def read_doc_text(path: Path) -> str:
    """Decode a file as Node's ``readFileSync(path, 'utf8')`` does: no newline translation, BOM kept."""
    return path.read_bytes().decode("utf-8", errors="replace")


def load_corpus(directory: str | Path, include_distractors: bool = True) -> Corpus:
    """Every ``*.md`` file in ``directory`` (not recursive), sorted by file name.

    ``include_distractors=False`` leaves out ``distractor-*.md``, for the with/without-distractors study.
    """
    root = Path(os.path.abspath(directory))
    if not root.is_dir():
        raise CorpusError(f"{root}: corpus directory not found")
    docs: list[CorpusDoc] = []
    excluded: list[str] = []
    for path in sorted(root.glob(f"*{DOC_SUFFIX}"), key=lambda p: p.name):
        if not path.is_file():
            continue
        doc_id = path.name[: -len(DOC_SUFFIX)]
        problem = check_doc_id(doc_id)
        if problem:
            raise CorpusError(f"{path}: file name is not a usable doc id: {doc_id!r} {problem}")
        if not include_distractors and doc_id.startswith(DISTRACTOR_PREFIX):
            excluded.append(doc_id)
            continue
        docs.append(CorpusDoc(doc_id, path, read_doc_text(path)))
    if not docs:
        raise CorpusError(
            f"{root}: no {DOC_SUFFIX} documents" + (" left after exclusions" if excluded else "")
        )
    return Corpus(root, tuple(docs), tuple(excluded))


def doc_id_from_source(source: str | None, corpus_dir: str | Path) -> str | None:
    """The doc id of a chunk ``source`` path, or None when it is not a markdown file inside the corpus dir.

    As in the reference: the resolved path must start with ``<abs corpus dir> + separator`` and end in
    ``.md``; the id is the base name without ``.md``. None counts as an unresolved chunk (a filter leak).
    """
    if not source:
        return None
    resolved = os.path.abspath(source)
    prefix = os.path.abspath(corpus_dir) + os.sep
    if not resolved.startswith(prefix) or not resolved.endswith(DOC_SUFFIX):
        return None
    return os.path.basename(resolved)[: -len(DOC_SUFFIX)]


@dataclass(frozen=True)
class IngestParams:
    """The ingest parameters that enter a fingerprint, in the reference's order, then any ``extra`` parts.

    ``extra`` holds nomad-lab's own parameters as ``(name, value)`` pairs (chunker, long-chunk embedding
    method, stop-word list); the reference has none.
    """

    embedding_model: str
    embedding_dimension: int
    chunk_tokens: int = 1500
    chunk_overlap_tokens: int = 150
    char_to_token_ratio: int = 2
    extra: tuple[tuple[str, str | int | float], ...] = field(default=())

    @property
    def chunk_chars(self) -> int:
        return self.chunk_tokens * self.char_to_token_ratio

    @property
    def chunk_overlap_chars(self) -> int:
        return self.chunk_overlap_tokens * self.char_to_token_ratio

    def parts(self) -> list[str]:
        """``name=value`` strings, numbers rendered as JavaScript renders them."""
        pairs: list[tuple[str, str | int | float]] = [
            ("chunkTokens", self.chunk_tokens),
            ("chunkOverlapTokens", self.chunk_overlap_tokens),
            ("charToTokenRatio", self.char_to_token_ratio),
            ("embeddingModel", self.embedding_model),
            ("embeddingDimension", self.embedding_dimension),
            *self.extra,
        ]
        return [f"{name}={_render(value)}" for name, value in pairs]


def _render(value: str | int | float) -> str:
    return value if isinstance(value, str) else js_number(value)


REFERENCE_INGEST = IngestParams(embedding_model="nomic-embed-text:v1.5", embedding_dimension=768)


def compute_fingerprint(param_parts: Sequence[str], docs: Iterable[tuple[str, str]]) -> str:
    """First 16 hex chars of SHA-256 over ``param_parts + ["doc=<id>\\n<text>" for docs sorted by id]``
    joined with ``"\\n---\\n"``, UTF-8 encoded."""
    doc_parts = [f"doc={doc_id}\n{text}" for doc_id, text in sorted(docs, key=lambda d: d[0])]
    joined = FINGERPRINT_SEPARATOR.join([*param_parts, *doc_parts])
    return hashlib.sha256(joined.encode("utf-8", errors="surrogatepass")).hexdigest()[:FINGERPRINT_HEX_CHARS]


def corpus_fingerprint(docs: Iterable[CorpusDoc | tuple[str, str]], params: IngestParams) -> str:
    """The reference recipe applied to ``docs`` (CorpusDocs or ``(doc_id, text)`` pairs) with ``params``."""
    pairs = [(d.doc_id, d.text) if isinstance(d, CorpusDoc) else d for d in docs]
    return compute_fingerprint(params.parts(), pairs)


def reference_fingerprint(docs: Iterable[CorpusDoc | tuple[str, str]]) -> str:
    """The reference's ``computeCorpusFingerprint`` with its own ingest parameters (nomic-embed-text, 768)."""
    return corpus_fingerprint(docs, REFERENCE_INGEST)
