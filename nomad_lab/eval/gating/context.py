"""What a gatherer reads: one stored run, its stored pools and chunks, read from the store once.

Why a context object: every input kind (verdicts, reranker and cross-encoder scores, coverage) reads the
same thing, each question's top-5 set at floor 0 as retrieval returns it and the judge reads it, so it
is built once per gather and handed to each gatherer instead of each reopening the store.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from nomad_lab.eval.gating.run_data import RunData
from nomad_lab.services.verdict_cache import judged_set
from nomad_lab.store import Store

T = TypeVar("T")


@dataclass
class GatherContext:
    """One run being gathered for: ``data`` (pools, queries, labels), the store it lives in,
    ``progress`` (False: quiet; True: a bar on stderr for gatherers that compute), and ``judge``: the
    judge specs whose missing verdicts this gather may compute (model calls; any other judge's verdicts
    are read from the cache only)."""

    store_path: Path
    data: RunData
    progress: bool = False
    stats: dict[str, Any] = field(default_factory=dict)  # what gatherers measured (seconds, pairs)
    judge: frozenset[str] = frozenset()

    @cached_property
    def _stored(self) -> tuple[dict[str, Any], dict[str, Any]]:
        with Store(self.store_path, read_only=True) as store:
            run = store.get_run(self.data.run_id)
            pools = store.get_pools(self.data.run_id)
            chunks = {c.chunk_id: c for c in store.get_chunks(run.fingerprint)}
        return pools, chunks

    def chunks(self, i: int) -> list[Any]:
        """Question ``i``'s top-5 set at floor 0 as retrieval returns it (Candidate records with
        ``text``, ``doc_id``, ``chunk_id``, ``score``), in rank order."""
        pools, chunks = self._stored
        return judged_set(pools.get(self.data.pools.ids[i], []), chunks, 0.0)

    def passages(self, i: int) -> list[str]:
        """The texts of question ``i``'s top-5 set: what the judge and the rerankers read."""
        return [c.text for c in self.chunks(i)]

    def chunk_texts(self) -> list[str]:
        """Every chunk text of the run's index (for corpus statistics such as IDF)."""
        return [c.text for c in self._stored[1].values()]

    def track(self, items: Iterable[T], label: str, total: int | None = None) -> Iterator[T]:
        """``items``, with a progress bar on stderr when ``progress`` is set."""
        if not self.progress:
            yield from items
            return
        from tqdm import tqdm  # heavy

        yield from tqdm(items, desc=label, total=total, file=sys.stderr, leave=False)
