"""Stored candidate pools as dense arrays, so gates can be swept offline without re-running retrieval.

A pool is one question's whole pre-floor reranked candidate list (SPEC §2.5: doc id, final score,
semantic score, up to topK×3 entries). Loading many pools into padded numpy arrays turns "apply a gate
and score recall@5 and leak" into array operations over every pool and every operating point at once.
The interchange format is the reference's ``--dump`` JSON, so a dump from the reference system loads.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


class PoolFormatError(ValueError):
    """A dump that is not the reference format; the message names the file and the field."""


@dataclass(frozen=True)
class PoolSet:
    """``n`` pools padded to ``width`` candidates; padding has score NaN and doc index -1.

    ``doc`` holds an integer per distinct doc id (``doc_names[i]``), -2 for a candidate whose source
    did not resolve (the diversity key "unknown"); ``relevant`` marks candidates whose doc is one of
    the pool's relevant docs; ``n_relevant`` counts relevant docs per pool (0 for refusals).
    """

    ids: list[str]
    tags: list[list[str]]
    expect_refusal: np.ndarray  # bool (n,)
    n_relevant: np.ndarray  # int (n,)
    score: np.ndarray  # float (n, width), descending per row, NaN padding
    semantic: np.ndarray  # float (n, width)
    doc: np.ndarray  # int (n, width)
    relevant: np.ndarray  # bool (n, width)
    doc_names: list[str]
    fingerprint: str | None = None
    params: Mapping[str, Any] | None = None

    @property
    def size(self) -> int:
        return len(self.ids)

    @property
    def valid(self) -> np.ndarray:
        return ~np.isnan(self.score)

    def subset(self, mask: np.ndarray) -> PoolSet:
        """The pools where ``mask`` is true (e.g. one suite or one tag)."""
        index = np.flatnonzero(mask)
        return PoolSet(
            ids=[self.ids[i] for i in index],
            tags=[self.tags[i] for i in index],
            expect_refusal=self.expect_refusal[index],
            n_relevant=self.n_relevant[index],
            score=self.score[index],
            semantic=self.semantic[index],
            doc=self.doc[index],
            relevant=self.relevant[index],
            doc_names=self.doc_names,
            fingerprint=self.fingerprint,
            params=self.params,
        )

    def with_tag(self, tag: str) -> PoolSet:
        return self.subset(np.array([tag in tags for tags in self.tags], dtype=bool))


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PoolFormatError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def pools_from_records(
    records: Sequence[Mapping[str, Any]],
    *,
    fingerprint: str | None = None,
    params: Mapping[str, Any] | None = None,
    source: str = "<pools>",
) -> PoolSet:
    """Build a PoolSet from reference-format pool records, validating every field it reads."""
    width = max((len(r.get("candidates") or []) for r in records), default=0)
    n = len(records)
    score = np.full((n, width), np.nan)
    semantic = np.full((n, width), np.nan)
    doc = np.full((n, width), -1, dtype=np.int64)
    relevant = np.zeros((n, width), dtype=bool)
    doc_index: dict[str, int] = {}
    ids, tags = [], []
    expect_refusal = np.zeros(n, dtype=bool)
    n_relevant = np.zeros(n, dtype=np.int64)
    for i, record in enumerate(records):
        where = f"{source}: pools[{i}]"
        if not isinstance(record, Mapping):
            raise PoolFormatError(f"{where}: expected an object")
        pool_id = record.get("id")
        if not isinstance(pool_id, str) or not pool_id:
            raise PoolFormatError(f"{where}.id: expected a non-empty string")
        ids.append(pool_id)
        record_tags = record.get("tags", [])
        if not isinstance(record_tags, list) or not all(isinstance(t, str) for t in record_tags):
            raise PoolFormatError(f"{where}.tags: expected a list of strings")
        tags.append(record_tags)
        expect_refusal[i] = bool(record.get("expectRefusal", False))
        rel = record.get("relevantDocIds", [])
        if not isinstance(rel, list) or not all(isinstance(d, str) for d in rel):
            raise PoolFormatError(f"{where}.relevantDocIds: expected a list of strings")
        n_relevant[i] = len(set(rel))
        candidates = record.get("candidates")
        if not isinstance(candidates, list):
            raise PoolFormatError(f"{where}.candidates: expected a list")
        previous = math.inf
        for j, candidate in enumerate(candidates):
            cwhere = f"{where}.candidates[{j}]"
            if not isinstance(candidate, Mapping):
                raise PoolFormatError(f"{cwhere}: expected an object")
            value = _number(candidate.get("score"), f"{cwhere}.score")
            if value > previous:
                raise PoolFormatError(f"{cwhere}.score: candidates must be in reranked (descending) order")
            previous = value
            score[i, j] = value
            semantic[i, j] = _number(candidate.get("semanticScore", value), f"{cwhere}.semanticScore")
            doc_id = candidate.get("docId")
            if doc_id is None:
                doc[i, j] = -2
            elif isinstance(doc_id, str):
                doc[i, j] = doc_index.setdefault(doc_id, len(doc_index))
                relevant[i, j] = doc_id in rel
            else:
                raise PoolFormatError(f"{cwhere}.docId: expected a string or null")
    return PoolSet(
        ids=ids,
        tags=tags,
        expect_refusal=expect_refusal,
        n_relevant=n_relevant,
        score=score,
        semantic=semantic,
        doc=doc,
        relevant=relevant,
        doc_names=list(doc_index),
        fingerprint=fingerprint,
        params=params,
    )


def load_dump(path: str | Path) -> PoolSet:
    """Load a reference ``eval:retrieval --dump`` JSON file (SPEC §2.5)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PoolFormatError(f"{path}: not a readable JSON dump ({exc})") from exc
    if not isinstance(data, Mapping) or not isinstance(data.get("pools"), list):
        raise PoolFormatError(f"{path}: not a candidate dump: expected an object with a 'pools' list")
    fingerprint = data.get("fingerprint")
    if fingerprint is not None and not isinstance(fingerprint, str):
        raise PoolFormatError(f"{path}: fingerprint: expected a string")
    params = data.get("params")
    return pools_from_records(
        data["pools"],
        fingerprint=fingerprint,
        params=params if isinstance(params, Mapping) else None,
        source=str(path),
    )
