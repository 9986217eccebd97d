"""Prefill by placement on a real model: does ``tail`` keep the KV-cache prefix and make turns cheap?

The seed moved the per-turn retrieved block behind history so the prompt prefix stays byte-identical
turn to turn; llama.cpp then re-evaluates only the new tail. It measured, at turn 14, 231 ms prefill
at the tail against 539 ms at the front (llama3:8b). This replays a multi-turn conversation turn by
turn through the embedded backend, llama.cpp in-process (its prompt cache reuses the longest common
token prefix, as a llama.cpp server slot does), for both placements, with a different retrieved block
every turn, and records per turn: prompt tokens, tokens evaluated vs reused, prefill time (llama.cpp's
own ``t_p_eval``) and the share of the prompt text identical to the previous turn's. Counts and
timings come from the backend's ``PrefillProbe`` capability; the study never touches llama.cpp.

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

from nomad_lab.backends.base import PrefillProbe
from nomad_lab.backends.embedded import EmbeddedBackend
from nomad_lab.backends.models import gemma_path
from nomad_lab.core.planner import plan_prompt
from nomad_lab.core.prompts import DEFAULT_SYSTEM_PROMPT, QUERY_REWRITE_SYSTEM_PROMPT
from nomad_lab.core.reference import RAG_FRONT, RAG_PLACEMENTS, RAG_TAIL
from nomad_lab.studies.budgeting.placement_report import SEED_TURN, SERIES, markdown, write
from nomad_lab.studies.params import CORPUS, STORE, positive
from nomad_lab.studies.shape import Param, Params, Study, execute


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


def probe(model_path: str | Path, n_ctx: int, n_threads: int = 2) -> PrefillProbe:
    """The embedded backend on ``model_path`` at ``n_ctx``: the study's only way to the model."""
    return EmbeddedBackend(str(model_path), n_ctx=n_ctx, threads=n_threads)


def replay(
    llm: PrefillProbe,
    turns: Sequence[tuple[str, str]],
    chunks_per_turn: Sequence[Sequence[str]],
    *,
    placement: str,
    context_window: int,
    rewrite_between: bool = False,
) -> list[TurnRow]:
    """Replay ``turns`` (user, assistant) one by one; turn t retrieves ``chunks_per_turn[t]``."""
    llm.forget_prefix()
    rows: list[TurnRow] = []
    previous = ""
    history: list[dict[str, str]] = []
    for t, (user, assistant) in enumerate(turns):
        if rewrite_between and history:
            rewrite = [
                {"role": "system", "content": QUERY_REWRITE_SYSTEM_PROMPT},
                {"role": "user", "content": f'Conversation:\nUser: "{user}"\n\nRewritten Query:'},
            ]
            llm.prefill(llm.render(rewrite))
        plan = plan_prompt(
            system_blocks=[{"role": "system", "content": DEFAULT_SYSTEM_PROMPT}],
            history=history,
            query=user,
            rag_chunks=[{"text": c} for c in chunks_per_turn[t % len(chunks_per_turn)]],
            context_window=context_window,
            rag_placement=placement,
        )
        prompt = llm.render(plan.messages)
        done = llm.prefill(prompt)
        share = _common_prefix(previous, prompt) / len(prompt) if previous else 0.0
        rows.append(
            TurnRow(
                placement,
                rewrite_between,
                t + 1,
                done.prompt_tokens,
                done.evaluated_tokens,
                done.reused_tokens,
                done.ms,
                share,
                plan.budget.chunks_kept,
                plan.budget.turns_kept,
            )
        )
        previous = prompt
        history += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    return rows


def reload_cost(model_path: str | Path, n_ctx: int, other_ctx: int, prompt: str) -> dict[str, float]:
    """What a context-window change costs: a reload plus re-evaluating the whole prompt, against a warm
    turn that only appends a short follow-up question to the cached prompt."""
    warm = probe(model_path, n_ctx)
    warm.prefill(prompt)
    warm_ms = warm.prefill(prompt + "\n" + WARM_FOLLOW_UP).ms
    reloaded = probe(model_path, other_ctx)
    load_ms = reloaded.load_ms()
    cold_ms = reloaded.prefill(prompt + "\n" + WARM_FOLLOW_UP).ms
    return {"reload_ms": load_ms, "cold_prefill_ms": cold_ms, "warm_prefill_ms": warm_ms}


WARM_FOLLOW_UP = "And how long does that take?"


def median_rows(runs: Sequence[Sequence[TurnRow]]) -> list[TurnRow]:
    """One row per turn with the median prefill time of the repeats (token counts are deterministic)."""
    import statistics

    return [
        TurnRow(**{**asdict(same[0]), "prefill_ms": statistics.median(r.prefill_ms for r in same)})
        for same in zip(*runs, strict=True)
    ]


def summarize(rows: Sequence[dict[str, Any]], turn: int = SEED_TURN) -> dict[str, Any]:
    """Per series: prefill at ``turn`` (or the last turn, if shorter) and the least-squares growth per turn.

    The slope is the robust figure: one turn's prefill is one noisy sample, the slope uses them all.
    """
    import numpy as np

    out: dict[str, Any] = {}
    for key in SERIES:
        placement, _, rewrite = key.partition("+")
        series = sorted(
            (r for r in rows if r["placement"] == placement and r["rewrite_between"] == bool(rewrite)),
            key=lambda r: r["turn"],
        )
        if not series:
            continue
        at = min(turn, series[-1]["turn"])
        turns = np.array([r["turn"] for r in series], dtype=float)
        ms = np.array([r["prefill_ms"] for r in series])
        slope = float(np.polyfit(turns, ms, 1)[0]) if len(series) > 1 else float("nan")
        row = next(r for r in series if r["turn"] == at)
        out[key] = {
            "turn": at,
            "prefill_ms": row["prefill_ms"],
            "evaluated_tokens": row["evaluated_tokens"],
            "slope_ms_per_turn": slope,
        }
    if RAG_TAIL in out and RAG_FRONT in out:
        out["front_over_tail"] = out[RAG_FRONT]["prefill_ms"] / out[RAG_TAIL]["prefill_ms"]
        out["seed_front_over_tail"] = 539 / 231
    return out


def fitted_ratio(tail: Sequence[TurnRow], front: Sequence[TurnRow], turn: int = SEED_TURN) -> float:
    """front/tail prefill at ``turn`` read off each series' least-squares line over all its turns: one
    replay's estimate, steadier than the single noisy sample at that turn."""
    import numpy as np

    def at(series: Sequence[TurnRow]) -> float:
        slope, intercept = np.polyfit([r.turn for r in series], [r.prefill_ms for r in series], 1)
        return float(slope * min(turn, series[-1].turn) + intercept)

    return at(front) / at(tail)


def t_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and 95% Student-t interval of independent replays' estimates (nan bounds for one)."""
    import statistics

    from scipy.stats import t

    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, float("nan"), float("nan")
    half = float(t.ppf(0.975, len(values) - 1)) * statistics.stdev(values) / len(values) ** 0.5
    return mean, mean - half, mean + half


def run_study(
    model_path: str | Path,
    turns: Sequence[tuple[str, str]],
    chunks_per_turn: Sequence[Sequence[str]],
    *,
    context_window: int = 8192,
    repeats: int = 6,
    min_repeats: int = 3,
    target: float = 0.05,
    budget_s: float | None = None,
) -> dict[str, Any]:
    """Both placements, with and without a rewrite between turns, plus the reload cost.

    The headline, front/tail at turn 14, gets as many paired replays of ``tail`` and ``front`` as its
    interval needs: at least ``min_repeats``, then more until the 95% interval of the per-replay
    :func:`fitted_ratio` is within ``target`` (relative half-width) of its mean, up to ``repeats``, and
    no new replay once ``budget_s`` seconds are spent. Rows are the per-turn medians of the replays. The
    rewrite series are replayed once: what they show (the evicted prefix) is in their token counts,
    which are deterministic.
    """
    from tqdm import tqdm

    if repeats < 1 or min_repeats < 1:
        raise ValueError(f"repeats and min_repeats must be at least 1, got {repeats}, {min_repeats}")
    started = time.perf_counter()
    llm = probe(model_path, context_window)

    def one(placement: str, rewrite: bool) -> list[TurnRow]:
        return replay(
            llm,
            turns,
            chunks_per_turn,
            placement=placement,
            context_window=context_window,
            rewrite_between=rewrite,
        )

    runs: dict[tuple[bool, str], list[list[TurnRow]]] = {(True, p): [one(p, True)] for p in RAG_PLACEMENTS}
    runs |= {(False, p): [] for p in RAG_PLACEMENTS}
    ratios: list[float] = []
    bar = tqdm(total=repeats, desc="placement replays (tail, front)", unit="pair")
    while len(ratios) < repeats:
        if len(ratios) >= min(min_repeats, repeats):
            mean, low, high = t_interval(ratios)
            spent = time.perf_counter() - started
            if (high - low) / 2 <= target * mean or (budget_s is not None and spent >= budget_s):
                break
        for placement in RAG_PLACEMENTS:
            runs[(False, placement)].append(one(placement, False))
        ratios.append(fitted_ratio(runs[(False, RAG_TAIL)][-1], runs[(False, RAG_FRONT)][-1]))
        bar.update()
    bar.close()
    settings = [(rewrite, placement) for rewrite in (False, True) for placement in RAG_PLACEMENTS]
    rows = [asdict(r) for k in settings for r in median_rows(runs[k])]
    long_prompt = llm.render([{"role": "user", "content": " ".join(chunks_per_turn[0])}])
    mean, low, high = t_interval(ratios)
    return {
        "model": Path(model_path).name,
        "context_window": context_window,
        "repeats": len(ratios),
        "rows": rows,
        "summary": summarize(rows),
        "front_over_tail_fit": {"mean": mean, "low": low, "high": high, "replays": ratios, "target": target},
        "reload": reload_cost(model_path, context_window, context_window // 2, long_prompt),
        "seconds": time.perf_counter() - started,
    }


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


BUDGET_S = 420.0
"""The placement study's share of the main job: three paired replays took about this long here."""

PARAMS = (
    Param("model", Path, None, "GGUF path (default: the embedded Gemma 3 270M)"),
    CORPUS,
    Param("turns", int, 16, "conversation turns replayed", check=positive),
    Param("context_window", int, 8192, "the model's context window", check=positive),
    Param(
        "repeats",
        int,
        6,
        "at most N paired tail/front replays (at least 3; more only until the front/tail interval is "
        "within ±5%); the median per turn",
        check=positive,
    ),
    Param("budget", float, BUDGET_S, "start no new replay after S seconds (measured)", metavar="S"),
    STORE,
)


def compute(params: Params) -> dict[str, Any]:
    """The study from its declared parameters (``model`` None: the embedded Gemma 3 270M)."""
    conversation, chunks = conversation_from_corpus(params.corpus, params.turns)
    result = run_study(
        params.model or gemma_path(),
        conversation,
        chunks,
        context_window=params.context_window,
        repeats=params.repeats,
        budget_s=params.budget,
    )
    return result | {"turns": params.turns}


def load_or_run(*, recompute: bool = False, **given: Any) -> dict[str, Any]:
    """The stored study in ``given["out"]`` if present (and not ``recompute``), else run it on ``given``
    (declared parameter names), store its rows in the workspace store (``study_rows``, study
    ``placement``) and write it there: the notebook's call, which reuses the published run."""
    stored = Path(given["out"]) / "placement.json"
    if stored.exists() and not recompute:
        return json.loads(stored.read_text())
    result, _ = execute(STUDY, given)
    return result


STUDY = Study(
    name="placement",
    title="Prefill by RAG placement on the embedded model",
    run=compute,
    rows=lambda result: result["rows"],
    markdown=markdown,
    write=write,
    out_dir="results/placement",
    command=("study", "placement"),
    figures=("prefill_vs_turn.png",),
    tables=("placement.md",),
    stage=30,
    params=PARAMS,
    notebook="placement",
)
