"""Stored candidate pools as dense arrays, so gates can be swept offline without re-running retrieval.

A pool is one question's whole pre-floor reranked candidate list (SPEC §2.5: doc id, final score,
semantic score, up to topK×3 entries). Loading many pools into padded numpy arrays turns "apply a gate
and score recall@5 and leak" into array operations over every pool and every operating point at once.
The interchange format is the reference's ``--dump`` JSON, so a dump from the reference system loads.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.data.dump import DumpError
from nomad_lab.data.dump import load_dump as read_dump
from nomad_lab.data.refusal_kinds import KindError, kind_of, question_kinds


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
    kinds: list[str] | None = None
    """Each question's refusal kind (:mod:`nomad_lab.data.refusal_kinds`), "" for an answerable one; None
    only on a PoolSet built by hand (read :attr:`refusal_kinds`, which derives it from the tags then)."""

    @property
    def refusal_kinds(self) -> np.ndarray:
        """Each question's refusal kind as an array ("" for answerable questions)."""
        kinds = self.kinds if self.kinds is not None else question_kinds(self.tags, self.expect_refusal)
        return np.array(kinds, dtype=object)

    def of_kind(self, kind: str) -> np.ndarray:
        """Mask of the refusals of ``kind``."""
        return self.refusal_kinds == kind

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
            kinds=None if self.kinds is None else [self.kinds[i] for i in index],
        )

    def with_tag(self, tag: str) -> PoolSet:
        return self.subset(np.array([tag in tags for tags in self.tags], dtype=bool))


def _score(value: object, where: str) -> float:
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise DumpError(f"{where}: expected a finite number, got {value!r}")
    return number


def pools_from_records(
    records: Sequence[Mapping[str, Any]],
    *,
    fingerprint: str | None = None,
    params: Mapping[str, Any] | None = None,
    source: str = "<pools>",
) -> PoolSet:
    """Build a PoolSet from reference-format pool records (shapes as ``store.validate_dump`` checks them).

    Beyond the shapes, scores must be finite and each pool in reranked (descending) order, because the
    sweeps rely on a floor keeping a prefix of every pool.
    """
    width = max((len(r["candidates"]) for r in records), default=0)
    n = len(records)
    score = np.full((n, width), np.nan)
    semantic = np.full((n, width), np.nan)
    doc = np.full((n, width), -1, dtype=np.int64)
    relevant = np.zeros((n, width), dtype=bool)
    doc_index: dict[str, int] = {}
    expect_refusal = np.array([bool(r.get("expectRefusal", False)) for r in records], dtype=bool)
    n_relevant = np.array([len(set(r.get("relevantDocIds", []))) for r in records], dtype=np.int64)
    for i, record in enumerate(records):
        rel = set(record.get("relevantDocIds", []))
        previous = math.inf
        for j, candidate in enumerate(record["candidates"]):
            where = f"{source}: pools[{i}].candidates[{j}]"
            value = _score(candidate["score"], f"{where}.score")
            if value > previous:
                raise DumpError(f"{where}.score: candidates must be in reranked (descending) order")
            previous = value
            score[i, j] = value
            semantic[i, j] = _score(candidate.get("semanticScore", value), f"{where}.semanticScore")
            doc_id = candidate.get("docId")
            if doc_id is None:
                doc[i, j] = -2
            else:
                doc[i, j] = doc_index.setdefault(doc_id, len(doc_index))
                relevant[i, j] = doc_id in rel
    return PoolSet(
        ids=[r["id"] for r in records],
        tags=[list(r.get("tags", [])) for r in records],
        expect_refusal=expect_refusal,
        n_relevant=n_relevant,
        score=score,
        semantic=semantic,
        doc=doc,
        relevant=relevant,
        doc_names=list(doc_index),
        fingerprint=fingerprint,
        params=params,
        kinds=_kinds(records, expect_refusal, source),
    )


def _kinds(records: Sequence[Mapping[str, Any]], refusal: np.ndarray, source: str) -> list[str]:
    """Each record's refusal kind ("" when answerable); a record whose tags name two kinds is refused."""
    kinds = []
    for i, (record, is_refusal) in enumerate(zip(records, refusal, strict=True)):
        try:
            kinds.append(kind_of(record.get("tags", []), record.get("refusalKind")) if is_refusal else "")
        except KindError as exc:
            raise DumpError(f"{source}: pools[{i}] ({record.get('id')}): {exc}") from None
    return kinds


def load_dump(path: str | Path) -> PoolSet:
    """Load and validate a reference ``eval:retrieval --dump`` JSON file (SPEC §2.5) into arrays."""
    data = read_dump(path)
    return pools_from_records(
        data["pools"], fingerprint=data["fingerprint"], params=data["params"], source=str(path)
    )
