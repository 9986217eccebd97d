"""The rows the store reads and writes, as frozen dataclasses: chunks, runs, pools, verdicts, calls."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any


@dataclass(frozen=True)
class ChunkRecord:
    """One indexed chunk: the payload the reranker reads (``text``, ``keywords``) plus identity."""

    chunk_id: str
    doc_id: str
    source: str
    chunk_index: int
    total_chunks: int
    text: str
    keywords: str
    char_count: int
    text_sha256: str


@dataclass(frozen=True)
class IndexRecord:
    fingerprint: str
    corpus_dir: str
    doc_count: int
    chunk_count: int
    model_key: str
    params: dict[str, Any]
    build_seconds: float | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class RunRecord:
    """A run: ``params`` holds at least the dump keys (topK, scoreThreshold, minFinalScore, kValues)."""

    kind: str
    fingerprint: str
    params: dict[str, Any]
    suite: str | None = None
    git_sha: str | None = None
    git_branch: str | None = None
    git_dirty: bool | None = None
    versions: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    run_id: str = field(default_factory=lambda: new_run_id())
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @classmethod
    def with_git(cls, git: Mapping[str, Any], **fields: Any) -> RunRecord:
        """A run carrying ``provenance.git_state()``'s ``{gitSha, gitBranch, gitDirty}``."""
        return cls(git_sha=git["gitSha"], git_branch=git["gitBranch"], git_dirty=git["gitDirty"], **fields)


@dataclass(frozen=True)
class PoolEntry:
    """One candidate of a pool, rank 1 = best after rerank (pre-floor)."""

    rank: int
    doc_id: str | None
    chunk_id: str | None
    score: float
    semantic_score: float


@dataclass(frozen=True)
class CaseRecord:
    golden_id: str
    position: int
    tags: tuple[str, ...]
    expect_refusal: bool
    relevant_doc_ids: tuple[str, ...]
    suite: str | None = None
    query: str | None = None
    result: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None
    refusal_kind: str | None = None
    """The golden's own ``refusalKind``; None when it had none (the kind then comes from the tags)."""


@dataclass(frozen=True)
class Verdict:
    """Judge outcome; ``on_topic`` is None when the judge failed open (``ok`` false, see ``reason``)."""

    on_topic: bool | None
    ok: bool
    reason: str | None = None
    ms: float | None = None
    prompt_tokens: int | None = None
    p_true: float | None = None
    """P(on_topic = true) at the verdict token; None with ``confidence_reason`` when it could not be read."""
    confidence_reason: str | None = None

    @property
    def confidence_asked(self) -> bool:
        """False for a verdict stored before confidence existed (both fields null)."""
        return self.p_true is not None or self.confidence_reason is not None

    @classmethod
    def of(cls, result: Any) -> Verdict:
        """The stored form of a ``judge_service.JudgeResult``."""
        return cls(
            result.verdict,
            result.judged,
            result.reason,
            result.ms,
            result.prompt_tokens,
            result.p_true,
            result.confidence_reason,
        )


@dataclass(frozen=True)
class ModelCall:
    """One chat call as the call log keeps it: who was asked, for what, what it cost, whether it worked.

    ``request_sha256`` hashes the exact request (model, messages, options), so equal rows are the same
    question asked again; ``failure`` is None for a call that returned and the failure label otherwise.
    """

    model: str
    purpose: str
    request_sha256: str
    prompt_tokens: int | None
    completion_tokens: int | None
    ms: float
    failure: str | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def ok(self) -> bool:
        return self.failure is None


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


def text_sha256(text: str) -> str:
    """SHA-256 of a text (lone surrogates kept): the one hash behind every content key of the store."""
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def judge_input_sha256(judge_input: str) -> str:
    """The verdict cache key's second half: SHA-256 of the exact judge user turn."""
    return text_sha256(judge_input)


def json_sha256(value: Any) -> str:
    """SHA-256 of ``value`` as sorted-key JSON: the key of an answer's parameters and of a call's request."""
    return text_sha256(json.dumps(value, sort_keys=True, default=str))
