"""Prefill by placement on a real model: does ``tail`` keep the KV-cache prefix and make turns cheap?

The seed moved the per-turn retrieved block behind history so the prompt prefix stays byte-identical
turn to turn; llama.cpp then re-evaluates only the new tail. It measured, at turn 14, 231 ms prefill
at the tail against 539 ms at the front (llama3:8b). This replays a multi-turn conversation turn by
turn through llama.cpp in-process (its prompt cache reuses the longest common token prefix, as a
llama.cpp server slot does) for both placements, with a different retrieved block every turn, and
records per turn: prompt tokens, tokens evaluated vs reused, prefill time (llama.cpp's own
``t_p_eval``) and the share of the prompt text identical to the previous turn's.

Two effects the seed names are measured too: a query-rewrite call on the same single slot between
turns (it evicts the chat prefix), and the cost of a context-window change (a model reload, which
memoizing the resolved window avoids).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .planner import plan_prompt
from .prompts import DEFAULT_SYSTEM_PROMPT, QUERY_REWRITE_SYSTEM_PROMPT


@dataclass(frozen=True)
class TurnRow:
    placement: str
    rewrite_between: bool
    turn: int
    prompt_tokens: int
    evaluated_tokens: int
    reused_tokens: int
    prefill_ms: float
    prefix_share: float  # share of this prompt's characters identical to the previous prompt's start
    chunks_kept: int
    turns_kept: int


def _common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def load_model(model_path: str | Path, n_ctx: int, n_threads: int = 2) -> Any:
    from llama_cpp import Llama

    return Llama(str(model_path), n_ctx=n_ctx, n_threads=n_threads, verbose=False)


def render(llm: Any, messages: list[dict[str, Any]]) -> str:
    """The exact prompt text the embedded backend would send (the GGUF's template, or Gemma folded)."""
    from .backends.embedded import chat_formatter

    return chat_formatter(llm, None)(messages).prompt


def prefill(llm: Any, prompt: str) -> tuple[int, int, int, float]:
    """Evaluate ``prompt`` (plus one sampled token) on the model's single slot.

    Returns (prompt tokens, tokens evaluated, tokens reused from the cache, prefill ms).
    """
    import llama_cpp

    tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
    reused = min(_common_prefix(list(llm._input_ids), tokens), len(tokens) - 1)
    llama_cpp.llama_perf_context_reset(llm._ctx.ctx)
    llm.create_completion(tokens, max_tokens=1, temperature=0.0)
    perf = llama_cpp.llama_perf_context(llm._ctx.ctx)
    return len(tokens), int(perf.n_p_eval), reused, float(perf.t_p_eval_ms)


def replay(
    llm: Any,
    turns: Sequence[tuple[str, str]],
    chunks_per_turn: Sequence[Sequence[str]],
    *,
    placement: str,
    context_window: int,
    rewrite_between: bool = False,
) -> list[TurnRow]:
    """Replay ``turns`` (user, assistant) one by one; turn t retrieves ``chunks_per_turn[t]``."""
    llm.reset()
    rows: list[TurnRow] = []
    previous = ""
    history: list[dict[str, str]] = []
    for t, (user, assistant) in enumerate(turns):
        if rewrite_between and history:
            rewrite = [
                {"role": "system", "content": QUERY_REWRITE_SYSTEM_PROMPT},
                {"role": "user", "content": f'Conversation:\nUser: "{user}"\n\nRewritten Query:'},
            ]
            prefill(llm, render(llm, rewrite))
        plan = plan_prompt(
            system_blocks=[{"role": "system", "content": DEFAULT_SYSTEM_PROMPT}],
            history=history,
            query=user,
            rag_chunks=[{"text": c} for c in chunks_per_turn[t % len(chunks_per_turn)]],
            context_window=context_window,
            rag_placement=placement,
        )
        prompt = render(llm, plan.messages)
        n, evaluated, reused, ms = prefill(llm, prompt)
        share = _common_prefix(previous, prompt) / len(prompt) if previous else 0.0
        rows.append(
            TurnRow(
                placement,
                rewrite_between,
                t + 1,
                n,
                evaluated,
                reused,
                ms,
                share,
                plan.budget.chunks_kept,
                plan.budget.turns_kept,
            )
        )
        previous = prompt
        history += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    return rows


def reload_cost(model_path: str | Path, n_ctx: int, other_ctx: int, prompt: str) -> dict[str, float]:
    """What a context-window change costs: a reload plus re-evaluating the whole prompt, vs a warm turn."""
    llm = load_model(model_path, n_ctx)
    prefill(llm, prompt)
    _, _, _, warm_ms = prefill(llm, prompt + " ")
    start = time.perf_counter()
    reloaded = load_model(model_path, other_ctx)
    load_ms = (time.perf_counter() - start) * 1000
    _, _, _, cold_ms = prefill(reloaded, prompt)
    return {"reload_ms": load_ms, "cold_prefill_ms": cold_ms, "warm_prefill_ms": warm_ms}


def run_study(
    model_path: str | Path,
    turns: Sequence[tuple[str, str]],
    chunks_per_turn: Sequence[Sequence[str]],
    *,
    context_window: int = 8192,
) -> dict[str, Any]:
    """Both placements, with and without a rewrite between turns, plus the reload cost."""
    llm = load_model(model_path, context_window)
    rows: list[TurnRow] = []
    for rewrite in (False, True):
        for placement in ("tail", "front"):
            rows += replay(
                llm,
                turns,
                chunks_per_turn,
                placement=placement,
                context_window=context_window,
                rewrite_between=rewrite,
            )
    last = max(r.turn for r in rows)
    probe = render(llm, [{"role": "user", "content": " ".join(chunks_per_turn[0])}])
    return {
        "model": Path(model_path).name,
        "context_window": context_window,
        "rows": [asdict(r) for r in rows],
        "at_last_turn": {
            f"{r.placement}{'+rewrite' if r.rewrite_between else ''}": r.prefill_ms
            for r in rows
            if r.turn == last
        },
        "reload": reload_cost(model_path, context_window, context_window // 2, probe),
    }


def write(result: dict[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """Rows and summary (JSON) and the prefill-vs-turn plot."""
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "placement.json", "png": out / "prefill_vs_turn.png"}
    paths["json"].write_text(json.dumps(result, indent=2) + "\n")
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for key in ("tail", "front", "tail+rewrite", "front+rewrite"):
        placement, _, rewrite = key.partition("+")
        series = [
            r for r in result["rows"] if r["placement"] == placement and r["rewrite_between"] == bool(rewrite)
        ]
        ax.plot(
            [r["turn"] for r in series],
            [r["prefill_ms"] for r in series],
            "o-" if not rewrite else "x--",
            ms=3,
            label=key,
        )
    ax.set_xlabel("turn")
    ax.set_ylabel("prefill (ms, llama.cpp t_p_eval)")
    ax.set_title(f"Prefill by RAG placement ({result['model']}, window {result['context_window']})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(paths["png"], dpi=150)
    plt.close(fig)
    return paths


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


def load_or_run(
    out_dir: str | Path,
    corpus: str | Path,
    *,
    turns: int,
    context_window: int,
    model: str | Path | None = None,
    recompute: bool = False,
) -> dict[str, Any]:
    """The stored study in ``out_dir`` if present (and not ``recompute``), else run it and store it."""
    stored = Path(out_dir) / "placement.json"
    if stored.exists() and not recompute:
        return json.loads(stored.read_text())
    from .models import gemma_path

    conversation, chunks = conversation_from_corpus(corpus, turns)
    result = run_study(model or gemma_path(), conversation, chunks, context_window=context_window)
    write(result, out_dir)
    return result
