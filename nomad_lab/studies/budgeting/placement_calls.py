"""The placement study's calls: every turn's messages per placement, the exact tokens each prefills, and
real calls checked against that accounting.

Why apart from the study: the accounting (which calls, in which order, on one slot) is shared by the
exact headline, the check against the engine's own counts, the cost model's planned sample and the
opt-in wall-clock replay; each of those only chooses which calls to make for real.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from nomad_lab.backends.base import Message, Prefill
from nomad_lab.core.planner import plan_prompt
from nomad_lab.core.prefix_cache import FULL_CACHE, CacheRule, Charge, Slot
from nomad_lab.core.prompts import DEFAULT_SYSTEM_PROMPT, QUERY_REWRITE_SYSTEM_PROMPT
from nomad_lab.studies.budgeting.placement_report import SERIES

EVICT: list[Message] = [{"role": "user", "content": "Unrelated warm-up: name a colour."}]
"""A short call that starts every chain of real calls, so the slot holds known tokens on any backend
(a server has no cache reset; the embedded backend is also reset before it)."""


class Prober(Protocol):
    """What the study needs from a backend (``PrefillProbe`` in-process, ``ServerPrefill`` over HTTP)."""

    def tokens(self, messages: list[Message]) -> list[int]: ...

    def prefill_messages(self, messages: list[Message]) -> Prefill: ...

    def forget_prefix(self) -> None: ...


@dataclass(frozen=True)
class Turn:
    """One turn of a series: the chat call's messages, the rewrite call before it (or None), and what
    the planner kept."""

    number: int
    messages: list[Message]
    rewrite: list[Message] | None
    chunks_kept: int
    turns_kept: int


def plan_turns(
    turns: Sequence[tuple[str, str]],
    chunks_per_turn: Sequence[Sequence[str]],
    *,
    placement: str,
    context_window: int,
    rewrite_between: bool = False,
) -> list[Turn]:
    """The conversation's calls for one placement: turn t retrieves ``chunks_per_turn[t]``, and with
    ``rewrite_between`` a query-rewrite call on the same slot precedes every turn after the first."""
    out: list[Turn] = []
    history: list[dict[str, str]] = []
    for t, (user, assistant) in enumerate(turns):
        rewrite = None
        if rewrite_between and history:
            rewrite = [
                {"role": "system", "content": QUERY_REWRITE_SYSTEM_PROMPT},
                {"role": "user", "content": f'Conversation:\nUser: "{user}"\n\nRewritten Query:'},
            ]
        plan = plan_prompt(
            system_blocks=[{"role": "system", "content": DEFAULT_SYSTEM_PROMPT}],
            history=history,
            query=user,
            rag_chunks=[{"text": c} for c in chunks_per_turn[t % len(chunks_per_turn)]],
            context_window=context_window,
            rag_placement=placement,
        )
        out.append(Turn(t + 1, plan.messages, rewrite, plan.budget.chunks_kept, plan.budget.turns_kept))
        history += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    return out


def series_plans(
    turns: Sequence[tuple[str, str]], chunks_per_turn: Sequence[Sequence[str]], context_window: int
) -> dict[str, list[Turn]]:
    """Every series' calls: each placement, with and without a rewrite call between turns."""
    return {
        key: plan_turns(
            turns,
            chunks_per_turn,
            placement=key.partition("+")[0],
            context_window=context_window,
            rewrite_between=key.endswith("+rewrite"),
        )
        for key in SERIES
    }


def chain_calls(plain: Sequence[Turn], rewritten: Sequence[Turn], first: int) -> list[tuple[str, list]]:
    """Real calls for one placement: turns ``first`` and ``first + 1`` as the plain series makes them,
    then the rewrite call and turn ``first + 2`` as the rewrite series does (the slot then holds the
    rewrite prompt, exactly as in that series)."""
    a, b, c = plain[first - 1], plain[first], rewritten[first + 1]
    assert c.rewrite is not None
    return [
        (f"turn {a.number}", a.messages),
        (f"turn {b.number}", b.messages),
        ("rewrite", c.rewrite),
        (f"turn {c.number} after a rewrite", c.messages),
    ]


def conversation_from_corpus(
    corpus: str | Path, n_turns: int, chunk_chars: int = 1200
) -> tuple[list[tuple[str, str]], list[list[str]]]:
    """A replayable conversation over the domain corpus: one question per document, two retrieved chunks.

    Each turn asks about the next domain document (sorted by name), the canned answer is that
    document's first paragraph, and the turn's retrieved block is two slices of it and its neighbour,
    so the block changes every turn as it does in a real chat.
    """
    docs = [p for p in sorted(Path(corpus).glob("*.md")) if not p.name.startswith("distractor-")]
    if not docs:
        raise FileNotFoundError(f"{corpus}: no domain documents (*.md) to build a conversation from")
    turns, chunks = [], []
    for t in range(n_turns):
        doc = docs[t % len(docs)]
        text = doc.read_text(encoding="utf-8")
        title = text.splitlines()[0].lstrip("# ").strip() if text else doc.stem
        body = " ".join(text.split())
        turns.append((f"What should I know about {title.lower()}?", body[:400]))
        neighbour = " ".join(docs[(t + 1) % len(docs)].read_text(encoding="utf-8").split())
        chunks.append([body[:chunk_chars], neighbour[:chunk_chars]])
    return turns, chunks


class Tokens:
    """``prober.tokens`` memoized by the messages (tail and tail+rewrite share every chat turn)."""

    def __init__(self, prober: Prober) -> None:
        self.prober = prober
        self._seen: dict[str, list[int]] = {}

    def __call__(self, messages: list[Message]) -> list[int]:
        key = json.dumps(messages, sort_keys=True)
        if key not in self._seen:
            self._seen[key] = self.prober.tokens(messages)
        return self._seen[key]


def account_series(
    plan: Sequence[Turn], tokens: Tokens, rule: CacheRule = FULL_CACHE
) -> list[tuple[Charge, Charge | None]]:
    """Each turn's chat call (and the rewrite call before it) on one slot that starts empty."""
    slot = Slot(rule)
    out = []
    for turn in plan:
        rewrite = slot.call(tokens(turn.rewrite)) if turn.rewrite is not None else None
        out.append((slot.call(tokens(turn.messages)), rewrite))
    return out


def explain(engine: Prefill, expected: Charge) -> str:
    """Whether the engine's counts are the accounting's: ``equal``, ``not reported`` (a server that
    does not say what it reused), or ``differs``."""
    if engine.prompt_tokens != expected.prompt_tokens:
        return "differs"
    if engine.evaluated_tokens is None:
        return "not reported"
    same = (engine.evaluated_tokens, engine.reused_tokens) == (
        expected.evaluated_tokens,
        expected.reused_tokens,
    )
    return "equal" if same else "differs"


def run_chain(
    prober: Prober,
    calls: Sequence[tuple[str, list[Message]]],
    tokens: Tokens,
    rule: CacheRule = FULL_CACHE,
) -> list[dict[str, Any]]:
    """Real calls ``(label, messages)`` on a slot that first runs :data:`EVICT`, each beside the
    accounting's charge for it: the engine's counts, the verdict of :func:`explain`, and its time."""
    prober.forget_prefix()
    slot = Slot(rule)
    rows = []
    for label, messages in [("evict", EVICT), *calls]:
        expected = slot.call(tokens(messages))
        engine = prober.prefill_messages(messages)
        rows.append(
            {
                "call": label,
                "prompt_tokens": expected.prompt_tokens,
                "evaluated_tokens": expected.evaluated_tokens,
                "reused_tokens": expected.reused_tokens,
                "engine_prompt_tokens": engine.prompt_tokens,
                "engine_evaluated_tokens": engine.evaluated_tokens,
                "engine_reused_tokens": engine.reused_tokens,
                "verdict": explain(engine, expected),
                "ms": engine.ms,
            }
        )
    return rows
