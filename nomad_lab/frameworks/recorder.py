"""Run any retriever over golden suites and write what it returned as a pool file.

Why one recorder for every framework: a pool file needs per question its labels (from the golden
suites) and per candidate its document id, chunk id, text and scores; only "ask the retriever" differs
between frameworks, so each framework module supplies a function from a question to its candidates and
this module does the rest, in rank order (best first, as ``score`` says).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.golden_suites import GATING_SUITES, load_suites
from nomad_lab.data.pool_jsonl import write_pool_jsonl
from nomad_lab.data.refusal_kinds import kind_of

Candidate = Mapping[str, Any]
"""What a framework's retrieve function returns per passage: ``docId``, ``chunkId``, ``text``, ``score``,
and optionally ``semanticScore`` and ``scores`` (the pool format's candidate fields, without ``rank``)."""


def golden_record(golden: Any, candidates: Sequence[Candidate], where: str) -> dict[str, Any]:
    """One question's pool record: its labels and its candidates ranked by score (ties keep their order)."""
    ordered = sorted(candidates, key=lambda c: -float(c["score"]))
    record: dict[str, Any] = {
        "id": golden.id,
        "query": golden.query,
        "suite": golden.suite,
        "tags": list(golden.tags),
    }
    if golden.expect_refusal:
        record["refusalKind"] = golden.refusal_kind or kind_of(golden.tags)
    else:
        record["relevantDocIds"] = list(golden.relevant_doc_ids)
    for c in ordered:
        if "score" not in c or "docId" not in c:
            raise NomadLabError(f"{where}: the retriever's candidates need docId and score (got {sorted(c)})")
    record["candidates"] = [{"rank": i, **dict(c)} for i, c in enumerate(ordered, start=1)]
    return record


def record_pools(
    retrieve: Callable[[str], Sequence[Candidate]],
    goldens_dir: str | Path,
    out: str | Path,
    *,
    suite: str = GATING_SUITES,
    header: Mapping[str, Any] | None = None,
) -> Path:
    """Ask ``retrieve`` every question of ``suite`` and write the pool JSONL file ``out``; the path."""
    goldens = load_suites(goldens_dir, suite)
    records = [golden_record(g, retrieve(g.query), f"question {g.id}") for g in goldens]
    return write_pool_jsonl(out, dict(header or {}), records)
