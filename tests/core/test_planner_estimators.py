"""The planner with another estimator, and with the size tier's RAG token cap."""

from __future__ import annotations

from nomad_lab.core.content_estimator import ContentEstimator
from nomad_lab.core.planner import plan_prompt
from nomad_lab.core.token_estimator import estimate_messages_tokens

SYSTEM = [{"role": "system", "content": "Be brief."}]
CHUNKS = [{"text": "word " * 300}, {"text": "more " * 300}, {"text": "tail " * 300}]


def test_any_estimator_costs_the_prompt_and_the_seed_is_the_default() -> None:
    seed = plan_prompt(system_blocks=SYSTEM, history=[], query="2026-12-03 12:45", context_window=8192)
    assert seed.budget.estimated_prompt_tokens == estimate_messages_tokens(seed.messages)
    content = ContentEstimator({"prose": 2.0})
    other = plan_prompt(
        system_blocks=SYSTEM,
        history=[],
        query="2026-12-03 12:45",
        context_window=8192,
        estimator=content.estimate,
    )
    assert other.budget.estimated_prompt_tokens == content.messages(other.messages)
    assert other.budget.estimated_prompt_tokens != seed.budget.estimated_prompt_tokens


def test_rag_token_cap_bounds_the_chunks_kept() -> None:
    free = plan_prompt(system_blocks=SYSTEM, history=[], query="q", rag_chunks=CHUNKS, context_window=32768)
    two = plan_prompt(
        system_blocks=SYSTEM, history=[], query="q", rag_chunks=CHUNKS[:2], context_window=32768
    )
    capped = plan_prompt(
        system_blocks=SYSTEM,
        history=[],
        query="q",
        rag_chunks=CHUNKS,
        context_window=32768,
        rag_token_cap=two.budget.rag_tokens,
    )
    assert free.budget.chunks_kept == 3
    assert capped.budget.chunks_kept == 2
    assert capped.budget.rag_tokens == two.budget.rag_tokens < free.budget.rag_tokens
    uncapped = plan_prompt(
        system_blocks=SYSTEM, history=[], query="q", rag_chunks=CHUNKS, context_window=32768, rag_token_cap=0
    )
    assert uncapped.budget == free.budget  # 0 = the largest tier's "no cap"
