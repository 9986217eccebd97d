"""Prefill by placement on the real embedded model: tail reuses the cache, front and rewrites do not."""

from __future__ import annotations

from itertools import pairwise

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llm():
    from nomad_lab.backends.models import gemma_path
    from nomad_lab.studies.budgeting.prefill import probe

    return probe(gemma_path(), 2048)


TURNS = [
    (f"Question {i}: how do I store water for {i} days?", "Keep it sealed and dark. " * 4) for i in range(4)
]
CHUNKS = [[f"Retrieved chunk {i} about storage containers and rotation. " * 4] for i in range(4)]


def test_tail_keeps_the_prefix_and_front_does_not(llm) -> None:
    from nomad_lab.studies.budgeting.prefill import replay

    tail = replay(llm, TURNS, CHUNKS, placement="tail", context_window=2048)
    front = replay(llm, TURNS, CHUNKS, placement="front", context_window=2048)
    assert [r.prompt_tokens for r in tail] == [r.prompt_tokens for r in front]
    # tail: everything before the new turn is reused, so the evaluated tail stays flat as history grows
    assert all(b.reused_tokens > a.reused_tokens for a, b in pairwise(tail[1:]))
    assert tail[-1].evaluated_tokens == tail[1].evaluated_tokens
    # front: the per-turn block sits before history, so history is re-evaluated and the cost grows
    assert front[-1].evaluated_tokens > front[1].evaluated_tokens
    assert front[-1].evaluated_tokens > tail[-1].evaluated_tokens
    assert tail[-1].prefix_share > front[-1].prefix_share


def test_a_rewrite_on_the_same_slot_evicts_the_chat_prefix(llm) -> None:
    from nomad_lab.studies.budgeting.prefill import replay

    plain = replay(llm, TURNS, CHUNKS, placement="tail", context_window=2048)
    rewritten = replay(llm, TURNS, CHUNKS, placement="tail", context_window=2048, rewrite_between=True)
    assert rewritten[-1].reused_tokens < plain[-1].reused_tokens
    assert rewritten[-1].evaluated_tokens > plain[-1].evaluated_tokens


def test_summary_takes_the_median_of_repeats_and_fits_growth_per_turn() -> None:
    from dataclasses import asdict

    from nomad_lab.studies.budgeting.prefill import TurnRow, median_rows, summarize

    def row(placement: str, turn: int, ms: float) -> TurnRow:
        return TurnRow(placement, False, turn, 100 * turn, 50, 100 * turn - 50, ms, 0.5, 2, turn - 1)

    tail_runs = [[row("tail", t, 100 + 2 * t + noise) for t in range(1, 17)] for noise in (0, 500, 4)]
    tail = median_rows(tail_runs)
    assert [r.prefill_ms for r in tail] == [100 + 2 * t + 4 for t in range(1, 17)]  # the 500 ms burst is gone
    front = [row("front", t, 100 + 25 * t) for t in range(1, 17)]
    summary = summarize([asdict(r) for r in tail + front])
    assert summary["tail"]["turn"] == summary["front"]["turn"] == 14
    assert summary["tail"]["slope_ms_per_turn"] == pytest.approx(2)
    assert summary["front"]["slope_ms_per_turn"] == pytest.approx(25)
    assert summary["front_over_tail"] == pytest.approx((100 + 25 * 14) / (100 + 28 + 4))
    short = summarize([asdict(r) for r in front[:5]])
    assert short["front"]["turn"] == 5 and "front_over_tail" not in short
