"""Prefill by placement on the real embedded model: tail reuses the cache, front and rewrites do not."""

from __future__ import annotations

from itertools import pairwise

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llm():
    pytest.importorskip("llama_cpp")
    from nomad_lab.models import gemma_path
    from nomad_lab.prefill_study import load_model

    return load_model(gemma_path(), 2048)


TURNS = [
    (f"Question {i}: how do I store water for {i} days?", "Keep it sealed and dark. " * 4) for i in range(4)
]
CHUNKS = [[f"Retrieved chunk {i} about storage containers and rotation. " * 4] for i in range(4)]


def test_tail_keeps_the_prefix_and_front_does_not(llm) -> None:
    from nomad_lab.prefill_study import replay

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
    from nomad_lab.prefill_study import replay

    plain = replay(llm, TURNS, CHUNKS, placement="tail", context_window=2048)
    rewritten = replay(llm, TURNS, CHUNKS, placement="tail", context_window=2048, rewrite_between=True)
    assert rewritten[-1].reused_tokens < plain[-1].reused_tokens
    assert rewritten[-1].evaluated_tokens > plain[-1].evaluated_tokens
