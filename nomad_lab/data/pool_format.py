"""The candidate-pool format: any RAG stack's retrieved sets, per question, in one file (docs/pools.md).

Why a format of our own beside the reference's dump: sweeps, the leaderboard and ``gate fit`` need only
pools, and a team on LangChain, LlamaIndex or its own service has pools but no reference dump. A file
holds one record per question (its id, query, suite, tags, and either its refusal kind or its relevant
document ids) with its retrieved candidates in rank order (rank, document id, chunk id, text, the
``score`` the stack ranks by, the raw ``semanticScore`` and any named ``scores``). JSON lines
(:mod:`nomad_lab.data.pool_jsonl`) and Parquet (:mod:`nomad_lab.data.pool_parquet`) hold the same
records; both read into one :class:`PoolColumns`, which :func:`validate` checks with array operations
(a million candidates in well under a second) and which the store imports in one transaction.

Optional columns are all or nothing over a file: a column a file lacks disables what reads it
(:func:`disabled_by_missing`), and a column present on some candidates only is an error naming the
first one without it, so every question's features are computed from the same inputs.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.corpus import is_fingerprint
from nomad_lab.data.golden_suites import check_doc_id
from nomad_lab.data.refusal_kinds import REFUSAL_KINDS

if TYPE_CHECKING:
    import numpy as np

FORMAT = "nomad-lab pools v1"
"""The header's ``format`` (JSONL: a first line ``{"format": ...}``; Parquet: key-value metadata)."""
PARQUET_KEY = "nomad-lab"
"""The Parquet key-value metadata key whose value is the header as JSON."""
OPTIONAL_COLUMNS = ("chunkId", "text", "semanticScore")
"""Candidate fields a file may leave out (on every candidate alike); ``rank``, ``docId``, ``score`` are
required (``docId`` may be null)."""
QUESTION_FIELDS = ("id", "query", "suite", "tags", "refusalKind", "relevantDocIds", "candidates")
CANDIDATE_FIELDS = ("rank", "docId", "chunkId", "text", "score", "semanticScore", "scores")
HEADER_FIELDS = ("format", "fingerprint", "embedder", "params", "stack")
DEFAULT_PARAMS = {"topK": 5, "scoreThreshold": 0.0, "minFinalScore": 0.0, "kValues": [1, 3, 5, 10]}
"""A stored run's dump parameters when the header gives none: a stack's own net, no floor applied."""

DISABLES = {
    "semanticScore": "the semantic_1..10 pool features and the cosine gate",
    "text": "the keyword_overlap pool feature, the coverage features and every gate that reads passages "
    "(judge, rerank, ce, answer)",
}


class PoolFileError(NomadLabError, ValueError):
    """A candidate-pool file is malformed; the message names the file and line (or row) and the field."""


@dataclass
class PoolColumns:
    """A pool file's records as columns: per question lists, per candidate flat arrays grouped by question.

    Candidates of question ``q`` are ``offsets[q]:offsets[q + 1]``; ``where[q]`` names its record
    (``file:line`` or ``file: row N``). ``chunk_id``, ``text`` and ``semantic`` are None when the file
    has no such column; ``scores`` maps each named score column to its values.
    """

    source: str
    header: dict[str, Any]
    ids: list[str]
    queries: list[str]
    suites: list[str | None]
    tags: list[list[str]]
    kinds: list[str | None]
    relevant: list[list[str]]
    where: list[str]
    offsets: np.ndarray
    rank: np.ndarray
    doc_id: list[str | None]
    score: np.ndarray
    chunk_id: list[str | None] | None = None
    text: list[str] | None = None
    semantic: np.ndarray | None = None
    scores: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.ids)

    @property
    def candidates(self) -> int:
        return int(self.offsets[-1]) if len(self.offsets) else 0

    @property
    def columns(self) -> list[str]:
        """The optional candidate columns this file holds."""
        present = {"chunkId": self.chunk_id, "text": self.text, "semanticScore": self.semantic}
        return [name for name in OPTIONAL_COLUMNS if present[name] is not None]

    def chunk_ids(self) -> list[str | None]:
        """Each candidate's chunk id: the file's, else ``sha256:`` of its text, else None."""
        if self.chunk_id is not None:
            return self.chunk_id
        if self.text is not None:
            return [text_chunk_id(t) for t in self.text]
        return [None] * self.candidates


def text_chunk_id(text: str) -> str:
    """The chunk id of a passage whose file gives none: its text's SHA-256, shortened."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]


def disabled_by_missing(columns: Sequence[str]) -> list[str]:
    """One line per optional column a file lacks that something reads: what it disables."""
    return [
        f"no {name} column: {what} are disabled" for name, what in DISABLES.items() if name not in columns
    ]


def check_header(header: Any, source: str) -> dict[str, Any]:
    """The header with its defaults; one error line naming the field otherwise."""
    if not isinstance(header, Mapping):
        raise PoolFileError(f"{source}: header: expected an object")
    if header.get("format") != FORMAT:
        raise PoolFileError(f"{source}: header.format: expected {FORMAT!r}, got {header.get('format')!r}")
    unknown = sorted(set(header) - set(HEADER_FIELDS))
    if unknown:
        raise PoolFileError(f"{source}: header: unknown field(s) {', '.join(unknown)}")
    if "fingerprint" in header and not is_fingerprint(header["fingerprint"]):
        raise PoolFileError(f"{source}: header.fingerprint: expected 16 lowercase hex characters")
    for key in ("embedder", "params", "stack"):
        if key in header and not isinstance(header[key], Mapping):
            raise PoolFileError(f"{source}: header.{key}: expected an object")
    params = {**DEFAULT_PARAMS, **header.get("params", {})}
    for key in ("topK", "scoreThreshold", "minFinalScore"):
        value = params[key]
        if not (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)):
            raise PoolFileError(f"{source}: header.params.{key}: expected a number, got {value!r}")
    return {**header, "params": params}


def check_question(record: Mapping[str, Any], where: str) -> None:
    """The question-level rules (types are the reader's): a refusal names its kind and no document, an
    answerable question names at least one relevant document and no kind."""
    kind, relevant = record.get("refusalKind"), record.get("relevantDocIds") or []
    if not record["id"]:
        raise PoolFileError(f"{where}: id: expected a non-empty string")
    if not record["query"].strip():
        raise PoolFileError(f"{where}: query: expected a non-empty string")
    if kind is not None:
        if kind not in REFUSAL_KINDS:
            raise PoolFileError(
                f"{where}: refusalKind: expected one of {', '.join(REFUSAL_KINDS)}, got {kind!r}"
            )
        if relevant:
            raise PoolFileError(f"{where}: a refusal (refusalKind {kind!r}) has no relevantDocIds")
    elif not relevant:
        raise PoolFileError(
            f"{where}: give relevantDocIds (an answerable question) or refusalKind (a refusal)"
        )
    for k, doc_id in enumerate(relevant):
        if problem := check_doc_id(doc_id):
            raise PoolFileError(f"{where}: relevantDocIds[{k}]: doc id {doc_id!r} {problem}")


def _first(bad: np.ndarray) -> int | None:
    import numpy as np  # heavy

    hits = np.flatnonzero(bad)
    return int(hits[0]) if hits.size else None


def validate(columns: PoolColumns) -> None:
    """Check the candidate columns with array operations; the first problem is one error line naming the
    question's record and the candidate (``file:line: candidates[j].score: ...``)."""
    import numpy as np  # heavy

    starts = columns.offsets[:-1]
    counts = np.diff(columns.offsets)
    question = np.repeat(np.arange(columns.size), counts)
    position = np.arange(columns.candidates) - np.repeat(starts, counts)

    def fail(j: int, name: str, why: str) -> None:
        q = int(question[j])
        raise PoolFileError(f"{columns.where[q]}: candidates[{int(position[j])}].{name}: {why}")

    seen: dict[str, int] = {}
    for q, golden_id in enumerate(columns.ids):
        if seen.setdefault(golden_id, q) != q:
            raise PoolFileError(
                f"{columns.where[q]}: id: duplicate id {golden_id!r} "
                f"(first at {columns.where[seen[golden_id]]})"
            )
    if (j := _first(columns.rank != position + 1)) is not None:
        fail(
            j,
            "rank",
            f"expected {int(position[j]) + 1} (ranks run 1, 2, ... in order), got {int(columns.rank[j])}",
        )
    named = [
        ("score", columns.score),
        *([("semanticScore", columns.semantic)] if columns.semantic is not None else []),
    ]
    named += [(f"scores.{name}", values) for name, values in columns.scores.items()]
    for name, values in named:
        if (j := _first(~np.isfinite(values))) is not None:
            fail(j, name, f"expected a finite number, got {float(values[j])!r}")
    rising = np.zeros(columns.candidates, dtype=bool)
    rising[1:] = (columns.score[1:] > columns.score[:-1]) & (position[1:] > 0)
    if (j := _first(rising)) is not None:
        fail(
            j,
            "score",
            f"{float(columns.score[j])!r} is above the previous candidate's: ranks follow score, best first",
        )
    problems = {d: check_doc_id(d) for d in set(columns.doc_id) if d is not None}
    if any(problems.values()):
        j = next(i for i, d in enumerate(columns.doc_id) if d is not None and problems[d])
        fail(j, "docId", f"doc id {columns.doc_id[j]!r} {problems[columns.doc_id[j]]}")
    if columns.chunk_id is not None:
        empty = _first(np.array([not c for c in columns.chunk_id], dtype=bool))
        if empty is not None:
            fail(empty, "chunkId", "expected a non-empty string")
        if columns.text is not None:
            texts: dict[str, tuple[str, int]] = {}
            for j, (chunk, text) in enumerate(zip(columns.chunk_id, columns.text, strict=True)):
                first = texts.setdefault(chunk, (text, j))
                if first[0] != text:
                    other = columns.where[int(question[first[1]])]
                    fail(j, "text", f"chunk {chunk!r} has another text at {other}: one chunk id, one text")
