"""``eval corpus --check``'s run check: every chunk a stored retrieval run retrieved must come from the eval
corpus.

Why: the reference refuses a run whose retrieved chunks include anything outside the eval corpus (a stale
index, a shared collection, a source outside the corpus directory): metrics over such a run measure a
different library. Every candidate of every pool counts (the pools are the pre-floor candidate lists, so
this is stricter than checking the returned chunks): its doc id must be a document of the corpus, and its
chunk must belong to the index the run was built on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.corpus import Corpus
from nomad_lab.store import Store

__all__ = ["OutsideChunk", "RunCorpusCheck", "check_run_corpus"]


@dataclass(frozen=True)
class OutsideChunk:
    golden_id: str
    rank: int
    chunk_id: str | None
    doc_id: str | None
    reason: str


@dataclass(frozen=True)
class RunCorpusCheck:
    run_id: str
    checked: int
    outside: list[OutsideChunk]

    @property
    def ok(self) -> bool:
        return not self.outside


def check_run_corpus(store_path: str | Path, corpus: Corpus, run_id: str | None = None) -> RunCorpusCheck:
    """Check the pools of ``run_id`` (default: the latest retrieval run) against ``corpus``."""

    with Store(store_path, read_only=True) as store:
        run_id = run_id or store.latest_run_id("retrieval")
        if run_id is None:
            raise NomadLabError(f"{store_path}: no retrieval run to check: run `nomad-lab eval retrieval`")
        run = store.get_run(run_id)
        indexed = {c.chunk_id for c in store.get_chunks(run.fingerprint)}
        pools = store.get_pools(run_id)
    docs = corpus.all_doc_ids
    outside, checked = [], 0
    for golden_id, entries in pools.items():
        for entry in sorted(entries, key=lambda e: e.rank):
            checked += 1
            reason = None
            if entry.doc_id is None:
                reason = "its source is not a markdown file inside the corpus directory"
            elif entry.doc_id not in docs:
                reason = f"doc {entry.doc_id!r} is not in {corpus.directory}"
            elif entry.chunk_id is not None and entry.chunk_id not in indexed:
                reason = f"chunk {entry.chunk_id!r} is not in the run's index {run.fingerprint}"
            if reason:
                outside.append(OutsideChunk(golden_id, entry.rank, entry.chunk_id, entry.doc_id, reason))
    return RunCorpusCheck(run_id, checked, outside)
