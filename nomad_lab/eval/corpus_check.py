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

from nomad_lab.data.corpus import Corpus
from nomad_lab.eval.gating.runs import RunChoice, parse_stored_run, resolve_run
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


def check_run_corpus(
    store_path: str | Path, corpus: Corpus, run: str | RunChoice | None = None
) -> RunCorpusCheck:
    """Check the pools of the stored run ``run`` names (a run id, ``main``: the main job's run over
    ``corpus``, or ``latest``; None: ``latest``) against ``corpus``."""
    run_id = resolve_run(store_path, parse_stored_run(run), corpus=corpus.directory)
    with Store(store_path, read_only=True) as store:
        stored = store.get_run(run_id)
        indexed = {c.chunk_id for c in store.get_chunks(stored.fingerprint)}
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
                reason = f"chunk {entry.chunk_id!r} is not in the run's index {stored.fingerprint}"
            if reason:
                outside.append(OutsideChunk(golden_id, entry.rank, entry.chunk_id, entry.doc_id, reason))
    return RunCorpusCheck(run_id, checked, outside)
