"""The prompt planner: explicit allocation of a local model's context window (SPEC §5).

Why: delegating overflow to the backend means silent truncation from the middle, exactly where history
and retrieved context sit. The planner allocates in order: response reserve, fixed blocks (system and
the current query, never dropped; the query truncated only if it alone overflows), whole RAG chunks
best-first within their share, then whole history turns newest-first, evicted in blocks of 4 so the
prompt prefix stays stable for several turns instead of shifting on every one. ``tail`` placement puts
the per-turn retrieved block behind history so the prefix stays byte-identical turn to turn and the
KV cache is reused; ``front`` is the older ordering, kept so both can be measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from nomad_lab.core.prompts import render_rag_message
from nomad_lab.core.reference import RAG_PLACEMENTS, RAG_TAIL
from nomad_lab.core.token_estimator import CONVERSATION_OVERHEAD_TOKENS, estimate_tokens, messages_cost

MAX_RESPONSE_RESERVE = 8192
MIN_RESPONSE_RESERVE = 256
RESPONSE_RESERVE_FRACTION = 0.25
DEFAULT_RAG_SHARE = 0.35
HISTORY_EVICTION_BLOCK = 4
NUM_PREDICT_SAFETY_MIN = 64
NUM_PREDICT_SAFETY_FRACTION = 0.05

ELISION_MARKER = "[Earlier messages in this conversation have been omitted to fit the context window.]"
TRUNCATION_MARKER = "\n\n[This message was truncated because it exceeds the context window.]"

Message = dict[str, Any]


@dataclass(frozen=True)
class BudgetTrace:
    """Every number behind one plan (SPEC §5.4 ``BudgetTrace``)."""

    context_window: int
    response_reserve: int
    prompt_budget: int
    estimated_prompt_tokens: int
    system_tokens: int
    query_tokens: int
    rag_tokens: int
    history_tokens: int
    chunks_kept: int
    chunks_dropped: int
    turns_kept: int
    turns_dropped: int
    history_elided: bool
    query_truncated: bool
    rag_placement: str
    num_predict: int

    def to_reference(self) -> dict[str, Any]:
        """The trace with the reference system's camelCase field names."""
        return {camel_case(key): value for key, value in asdict(self).items()}


def camel_case(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@dataclass(frozen=True)
class PromptPlan:
    """The messages to send, the chunks that made it in, and the budget trace."""

    messages: list[Message]
    kept_chunks: list[Any]
    budget: BudgetTrace


def response_reserve_for(context_window: int) -> int:
    """Tokens held back for the answer: a quarter of the window, between 256 and 8192."""
    return max(
        MIN_RESPONSE_RESERVE,
        min(MAX_RESPONSE_RESERVE, math.floor(context_window * RESPONSE_RESERVE_FRACTION)),
    )


def group_turns(history: Sequence[Message]) -> list[list[Message]]:
    """Whole turns: each user message opens one; other roles attach to the open turn (or open one)."""
    turns: list[list[Message]] = []
    for message in history:
        if message.get("role") == "user" or not turns:
            turns.append([message])
        else:
            turns[-1].append(message)
    return turns


def _as_message(query: str | Mapping[str, Any]) -> Message:
    return {"role": "user", "content": query} if isinstance(query, str) else dict(query)


def plan_prompt(
    *,
    system_blocks: Sequence[Message],
    history: Sequence[Message],
    query: str | Mapping[str, Any],
    rag_chunks: Sequence[Any] = (),
    context_window: int,
    render_rag_block: Callable[[Sequence[Any]], str] = render_rag_message,
    ratio: float = 1.0,
    rag_placement: str = RAG_TAIL,
    response_reserve: int | None = None,
    rag_share: float | None = None,
    budget_elision_marker: bool = False,
    estimator: Callable[[str], int] | None = None,
    rag_token_cap: int | None = None,
) -> PromptPlan:
    """Plan one chat prompt within ``context_window`` tokens (SPEC §5.2–5.3).

    Seed quirks kept: every part is costed as its own conversation (+3 each), so the parts do not sum
    to the whole; and the elision marker is added without being budgeted, so when history is elided
    the prompt can exceed the budget by up to the marker's cost. ``budget_elision_marker=True`` (not
    the seed's behaviour) reserves room for the marker before fitting history (and leaves it out when
    not even the marker fits), which makes "the plan never exceeds the budget unless system blocks
    and query alone do" hold.

    ``estimator`` counts a text's tokens in place of the seed's segmenter × ``ratio`` (e.g. a
    ``ContentEstimator``'s or an ``ExactEstimator``'s ``estimate``); the per-message overheads stay
    the seed's. ``rag_token_cap`` (the model-size tier's ``maxTokens``; None or 0 = no cap) bounds
    the RAG budget.
    """
    if rag_placement not in RAG_PLACEMENTS:
        raise ValueError(f"rag_placement must be one of {RAG_PLACEMENTS}, got {rag_placement!r}")

    def count(text: str) -> int:
        return estimator(text) if estimator is not None else estimate_tokens(text, ratio)

    def cost(messages: Sequence[Any]) -> int:
        return messages_cost(messages, count)

    reserve = response_reserve if response_reserve is not None else response_reserve_for(context_window)
    prompt_budget = max(0, context_window - reserve)

    system = [dict(m) for m in system_blocks]
    query_message = _as_message(query)
    system_tokens, query_tokens = cost(system), cost([query_message])
    query_truncated = False
    available = prompt_budget - system_tokens
    if system_tokens + query_tokens > prompt_budget and available > 0:
        text = str(query_message.get("content") or "")
        per_token = len(text) / max(1, count(text))
        keep_chars = max(0, math.floor(available * per_token) - len(ELISION_MARKER))
        query_message["content"] = text[:keep_chars] + TRUNCATION_MARKER
        query_tokens = cost([query_message])
        query_truncated = True

    remaining = prompt_budget - system_tokens - query_tokens
    share = DEFAULT_RAG_SHARE if rag_share is None else rag_share
    rag_budget = math.floor(max(0, remaining) * share)
    if rag_token_cap:
        rag_budget = min(rag_budget, rag_token_cap)
    kept_chunks: list[Any] = []
    rag_tokens = 0
    for chunk in rag_chunks:
        trial = [*kept_chunks, chunk]
        trial_cost = cost([{"role": "system", "content": render_rag_block(trial)}])
        if trial_cost <= rag_budget:
            kept_chunks, rag_tokens = trial, trial_cost
    remaining -= rag_tokens

    turns = group_turns(history)
    marker_message = {"role": "system", "content": ELISION_MARKER}
    kept_turns, history_tokens = _fit_turns(turns, remaining, cost)
    show_marker = len(kept_turns) < len(turns)
    if budget_elision_marker and show_marker:
        marker_cost = cost([marker_message]) - CONVERSATION_OVERHEAD_TOKENS
        kept_turns, history_tokens = _fit_turns(turns, remaining - marker_cost, cost)
        show_marker = remaining >= marker_cost  # no room even for the marker: elide silently
    history_elided = len(kept_turns) < len(turns)

    rag_message = [{"role": "system", "content": render_rag_block(kept_chunks)}] if kept_chunks else []
    marker = [marker_message] if show_marker else []
    kept_history = [message for turn in kept_turns for message in turn]
    if rag_placement == RAG_TAIL:
        messages = [*system, *marker, *kept_history, *rag_message, query_message]
    else:
        messages = [*system, *rag_message, *marker, *kept_history, query_message]

    estimated = cost(messages)
    num_predict = max(
        reserve,
        context_window
        - estimated
        - max(NUM_PREDICT_SAFETY_MIN, math.ceil(NUM_PREDICT_SAFETY_FRACTION * estimated)),
    )
    budget = BudgetTrace(
        context_window=context_window,
        response_reserve=reserve,
        prompt_budget=prompt_budget,
        estimated_prompt_tokens=estimated,
        system_tokens=system_tokens,
        query_tokens=query_tokens,
        rag_tokens=rag_tokens,
        history_tokens=history_tokens,
        chunks_kept=len(kept_chunks),
        chunks_dropped=len(rag_chunks) - len(kept_chunks),
        turns_kept=len(kept_turns),
        turns_dropped=len(turns) - len(kept_turns),
        history_elided=history_elided,
        query_truncated=query_truncated,
        rag_placement=rag_placement,
        num_predict=num_predict,
    )
    return PromptPlan(messages=messages, kept_chunks=kept_chunks, budget=budget)


def _fit_turns(
    turns: list[list[Message]], remaining: int, cost: Callable[[Sequence[Any]], int]
) -> tuple[list[list[Message]], int]:
    """Newest-first whole turns while they fit, then block eviction to a multiple of 4 dropped."""
    costs: list[int] = []
    used = 0
    for turn in reversed(turns):
        turn_cost = cost(turn)
        if used + turn_cost > remaining:
            break
        costs.append(turn_cost)
        used += turn_cost
    kept = len(costs)
    dropped = len(turns) - kept
    if dropped > 0 and kept >= 1:
        extra = min(
            (HISTORY_EVICTION_BLOCK - dropped % HISTORY_EVICTION_BLOCK) % HISTORY_EVICTION_BLOCK, kept - 1
        )
        for _ in range(extra):
            used -= costs.pop()
        kept -= extra
    return turns[len(turns) - kept :], used
