"""Which prompt tokens a KV-prefix cache must evaluate: one slot's accounting from token sequences alone.

Why: the prefill a RAG placement costs is mostly decided before any model runs. A slot (llama.cpp's
single sequence, llama-cpp-python's ``Llama``, an Ollama or llama.cpp server slot) keeps the tokens of
its last call in the KV cache and re-evaluates only what differs, so the tokens a turn prefills follow
from the token sequences and the cache's rule. Counting them here, with no decode, gives the placement
study a machine-independent headline; a fitted cost model (``studies/budgeting/prefill_cost``) turns
the counts into milliseconds.

The rules, as llama.cpp applies them (each is pinned by a test on planted sequences, and the engine's
own counts are checked against this accounting on real calls):

1. **Longest common prefix.** A call reuses the longest common prefix of its tokens with the tokens the
   slot holds (the previous call's prompt, plus any generated tokens that were evaluated), but never
   the whole prompt: at least the last ``min_evaluated`` (1) token is evaluated, because its logits are
   needed for the next token. Everything after the prefix is evaluated, attending over the reused
   positions (the ``context_tokens`` a cost model charges per evaluated token).
2. **Sliding windows.** A model with sliding-window attention layers (Gemma 3's local layers, window
   ``W``) whose cache keeps only the newest ``keep`` positions of those layers (llama.cpp's non-full
   SWA cache, ``keep`` = ``W`` + the micro-batch) can reuse a prefix of ``p`` tokens only if every
   position the next token attends to, ``[p - W, p)``, is still held: the oldest held position
   ``max(0, held - keep)`` must be at most ``max(0, p - W)``. Otherwise the slot evaluates the whole
   prompt again (llama-server logs "forcing full prompt re-processing due to lack of cache data").
   A full SWA cache (``keep`` None: llama.cpp's context default ``swa_full``, which llama-cpp-python
   and so the embedded backend use) keeps every position and rule 1 alone applies.
3. **What the engine times.** llama.cpp's perf counters (``n_p_eval``/``t_p_eval``, which the embedded
   backend and ``nomad-lab serve`` report) file an evaluation of exactly one token under generation:
   a fully cached prompt, whose last token alone is re-evaluated, reads ``n_p_eval`` 1 (the counter's
   floor) and 0 ms of prompt time. Its count agrees with rule 1; its time is not a prefill, so such
   calls are left out of a prefill cost model (:func:`timed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CacheRule:
    """How a slot reuses its cache: see the module's rules 1-3."""

    min_evaluated: int = 1
    sliding_window: int | None = None
    """``W`` of the model's sliding-window layers; None when every layer attends over all positions."""
    swa_keep: int | None = None
    """Positions the sliding-window layers keep; None: all of them (a full SWA cache)."""


FULL_CACHE = CacheRule()
"""llama.cpp through llama-cpp-python (the embedded backend): every position kept (``swa_full``)."""


@dataclass(frozen=True)
class Charge:
    """One call on a slot: its prompt, what it reused from the cache and what it evaluated."""

    prompt_tokens: int
    reused_tokens: int
    evaluated_tokens: int

    @property
    def context_tokens(self) -> int:
        """Positions already in the cache when evaluation starts: what each evaluated token attends over
        besides the evaluated tokens before it."""
        return self.reused_tokens


def common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    """The length of the longest common prefix of two sequences."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def reusable(held: Sequence[int], prompt: Sequence[int], rule: CacheRule = FULL_CACHE) -> int:
    """How many leading tokens of ``prompt`` a slot holding ``held`` serves from its cache (rules 1-2)."""
    prefix = min(common_prefix(held, prompt), max(len(prompt) - rule.min_evaluated, 0))
    if prefix and rule.sliding_window is not None and rule.swa_keep is not None:
        oldest_held = max(0, len(held) - rule.swa_keep)
        if oldest_held > max(0, prefix - rule.sliding_window):
            return 0
    return prefix


def timed(evaluated: int) -> bool:
    """Whether an evaluation of ``evaluated`` tokens reports prompt time at all (rule 3)."""
    return evaluated > 1


def charge(held: Sequence[int], prompt: Sequence[int], rule: CacheRule = FULL_CACHE) -> Charge:
    """One call of ``prompt`` on a slot holding ``held``."""
    reused = reusable(held, prompt, rule)
    evaluated = len(prompt) - reused
    return Charge(len(prompt), reused, evaluated)


class Slot:
    """One KV-cache slot: the tokens it holds, charged call by call."""

    def __init__(self, rule: CacheRule = FULL_CACHE) -> None:
        self.rule = rule
        self.held: list[int] = []

    def call(self, prompt: Sequence[int], generated: Sequence[int] = ()) -> Charge:
        """Charge ``prompt``; the slot then holds it plus the ``generated`` tokens that were evaluated."""
        done = charge(self.held, prompt, self.rule)
        self.held = [*prompt, *generated]
        return done

    def forget(self) -> None:
        """An empty cache: the next call evaluates its whole prompt."""
        self.held = []


def account(prompts: Sequence[Sequence[int]], rule: CacheRule = FULL_CACHE) -> list[Charge]:
    """Every call of ``prompts``, in order, on one slot that starts empty."""
    slot = Slot(rule)
    return [slot.call(p) for p in prompts]
