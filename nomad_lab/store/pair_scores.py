"""The pair-score cache: one score per (scorer model key, SHA-256 of question + NUL + passage text), ever.

Why a cache: a cross-encoder pass over a question's top-5 windows costs hundreds of milliseconds on two
cores, while a gate study reads the same pairs again for every gate, fold and rerun. The key is the
scorer's model identity (its files' digest, not the windowing: a window's text is in the pair hash) and
the exact text pair, so any window cut the same way by another setting is reused.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from nomad_lab.store.records import text_sha256
from nomad_lab.store.tables import TableGroup

__all__ = ["PairScoreCache", "pair_sha256"]


def pair_sha256(query: str, text: str) -> str:
    """The cache key's second half: SHA-256 of ``query + "\\x00" + text``."""
    return text_sha256(query + "\x00" + text)


class PairScoreCache(TableGroup):
    """Methods of :class:`nomad_lab.store.Store` over ``pair_scores``."""

    def get_pair_scores(
        self, scorer: str, pair_sha256s: Iterable[str]
    ) -> dict[str, tuple[float, float | None]]:
        """The cached ``(score, ms)`` of these pair hashes for this scorer (absent ones are left out)."""
        wanted = list(dict.fromkeys(pair_sha256s))
        if not wanted or self.found_version < 6:  # a read-only older store has no cache yet
            return {}
        rows = self.con.execute(
            "SELECT pair_sha256, score, ms FROM pair_scores "
            "WHERE scorer = ? AND list_contains(?, pair_sha256)",
            [scorer, wanted],
        ).fetchall()
        return {sha: (score, ms) for sha, score, ms in rows}

    def put_pair_scores(self, scorer: str, rows: Sequence[tuple[str, float, float | None]]) -> None:
        """Store ``(pair hash, score, ms)`` rows for a scorer, all or none."""
        now = datetime.now(UTC)
        with self.transaction():
            self.insert_rows(
                "INSERT OR REPLACE INTO pair_scores",
                ("VARCHAR", "VARCHAR", "DOUBLE", "DOUBLE", "TIMESTAMPTZ"),
                [[scorer, sha, float(score), ms, now] for sha, score, ms in rows],
            )
