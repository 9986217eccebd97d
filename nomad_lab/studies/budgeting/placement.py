"""Prefill by placement: does ``tail`` keep the KV-cache prefix and make turns cheap?

The seed moved the per-turn retrieved block behind history so the prompt prefix stays byte-identical
turn to turn; the server then re-evaluates only the new tail. It measured, at turn 14, 231 ms prefill
at the tail against 539 ms at the front (llama3:8b under Ollama). This study answers in two parts:

1. **Tokens, exactly.** Every turn of a 16-turn conversation over the corpus (a different retrieved
   block every turn) is rendered and tokenized for both placements, with and without a query-rewrite
   call on the same slot between turns, and charged by the KV-prefix cache rule of
   :mod:`nomad_lab.core.prefix_cache`, with no decode. A sample of real calls (turns 13-15 of every
   series, each after a known warm-up call) checks the accounting against the engine's own counts.
2. **Time, from a fitted cost model.** A planned sample of prefills at a few (evaluated tokens,
   context) cells is timed on the backend (:mod:`.prefill_cost`), rounds added only while the
   modelled turn-14 front/tail ratio's interval is wider than +/-5%, and every turn's ms read off
   the model; the real calls of part 1 are the directly timed points beside it.

Replaying whole conversations pair by pair (the old protocol: 161 model calls, the answer depending on
the machine's load) stays available as an opt-in check that the model predicts it (``--replay N``,
:mod:`.placement_replay`). Any backend spec runs the same protocol: the embedded model by default, or
an Ollama or OpenAI-compatible server (:class:`~nomad_lab.backends.server_prefill.ServerPrefill`),
whose token sequences then come from a local GGUF tokenizer (``--tokenizer``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from nomad_lab.backends.embedded import EmbeddedBackend
from nomad_lab.backends.server_prefill import ServerPrefill
from nomad_lab.core.reference import RAG_FRONT, RAG_PLACEMENTS, RAG_TAIL
from nomad_lab.studies.budgeting.placement_calls import (
    Prober,
    Tokens,
    Turn,
    account_series,
    chain_calls,
    conversation_from_corpus,
    run_chain,
    series_plans,
)
from nomad_lab.studies.budgeting.placement_replay import replay_check
from nomad_lab.studies.budgeting.placement_report import SEED_TURN, SERIES, draw, pages
from nomad_lab.studies.budgeting.prefill_cost import Fit, Point, design, sample_until
from nomad_lab.studies.params import CORPUS, STORE, not_negative, positive
from nomad_lab.studies.result import Figure, Result
from nomad_lab.studies.shape import Param, Params, Study, execute

SEED_RATIO = 539 / 231  # the seed's turn-14 front/tail prefill (llama3:8b under Ollama)


@dataclass(frozen=True)
class TurnRow:
    placement: str
    rewrite_between: bool
    turn: int
    prompt_tokens: int
    evaluated_tokens: int
    reused_tokens: int
    rewrite_evaluated_tokens: int  # the rewrite call before this turn (0: none)
    modelled_ms: float
    modelled_low: float
    modelled_high: float
    chunks_kept: int
    turns_kept: int


def probe(backend: str, context_window: int, tokenizer: str | None = None) -> Prober:
    """The study's only way to a model: the embedded backend in-process, or a server by its spec."""
    if backend.startswith("embedded:"):
        return EmbeddedBackend(backend.removeprefix("embedded:"), n_ctx=context_window)

    return ServerPrefill(backend, tokenizer=tokenizer, num_ctx=context_window)


def exact_rows(plans: dict[str, list[Turn]], tokens: Tokens) -> list[dict[str, Any]]:
    """Every turn of every series, charged by the cache rule (no model call)."""
    rows = []
    for key, plan in plans.items():
        placement, _, rewrite = key.partition("+")
        for turn, (chat, before) in zip(plan, account_series(plan, tokens), strict=True):
            rows.append(
                {
                    "placement": placement,
                    "rewrite_between": bool(rewrite),
                    "turn": turn.number,
                    "prompt_tokens": chat.prompt_tokens,
                    "evaluated_tokens": chat.evaluated_tokens,
                    "reused_tokens": chat.reused_tokens,
                    "rewrite_evaluated_tokens": before.evaluated_tokens if before else 0,
                    "chunks_kept": turn.chunks_kept,
                    "turns_kept": turn.turns_kept,
                }
            )
    return rows


def calibration_round(
    prober: Prober,
    tokens: Tokens,
    text: str,
    cells: Sequence[tuple[int, int]],
    chars_per_token: float,
    r: int,
) -> list[Point]:
    """One timed round of the planned sample: per context level a priming call, then each evaluated
    size appended to it; every call's (evaluated, context) from the accounting, its ms from the engine."""

    def piece(k: int, n_tokens: int) -> str:
        start = (k * 104_729 + r * 7_919) % len(text)  # a different start for every call and round
        return (text + " " + text)[start : start + max(1, int(n_tokens * chars_per_token))]

    calls: list[tuple[str, list]] = []
    for k, context in enumerate(sorted({c for _, c in cells})):
        prefix = piece(100 + k, context) + " " if context else ""
        if context:
            calls.append(("prime", [{"role": "user", "content": prefix}]))
        for j, (n, c) in enumerate(cells):
            if c == context:
                calls.append((f"n{n}/c{c}", [{"role": "user", "content": prefix + piece(10 * k + j, n)}]))
    rows = run_chain(prober, calls, tokens)
    return [
        Point(row["evaluated_tokens"], row["reused_tokens"], row["ms"], row["call"])
        for row in rows[1:]
        if row["ms"]
    ]


def reload_cost(backend: str, n_ctx: int, other_ctx: int, messages: list) -> dict[str, float] | None:
    """What a context-window change costs in-process: a reload plus re-evaluating the whole prompt,
    against a warm turn that only appends a short follow-up question (None on a server)."""
    if not backend.startswith("embedded:"):
        return None
    follow = [*messages, {"role": "user", "content": WARM_FOLLOW_UP}]
    warm = probe(backend, n_ctx)
    warm.prefill_messages(messages)
    warm_ms = warm.prefill_messages(follow).ms
    reloaded = probe(backend, other_ctx)
    load_ms = reloaded.load_ms()  # type: ignore[attr-defined]  # the embedded backend's
    cold_ms = reloaded.prefill_messages(follow).ms
    return {"reload_ms": load_ms, "cold_prefill_ms": cold_ms, "warm_prefill_ms": warm_ms}


WARM_FOLLOW_UP = "And how long does that take?"


def at_turn(rows: Sequence[dict[str, Any]], key: str, turn: int) -> dict[str, Any]:
    placement, _, rewrite = key.partition("+")
    series = [r for r in rows if r["placement"] == placement and r["rewrite_between"] == bool(rewrite)]
    return next(r for r in series if r["turn"] == min(turn, max(s["turn"] for s in series)))


def run_study(
    backend: str,
    turns: Sequence[tuple[str, str]],
    chunks_per_turn: Sequence[Sequence[str]],
    *,
    context_window: int = 8192,
    tokenizer: str | None = None,
    target: float = 0.05,
    min_rounds: int = 1,
    max_rounds: int = 6,
    budget_s: float | None = None,
    replays: int = 0,
) -> dict[str, Any]:
    """Exact tokens for every turn, the real-call check, the cost model and the modelled times."""
    started = time.perf_counter()
    prober = probe(backend, context_window, tokenizer)
    tokens = Tokens(prober)
    plans = series_plans(turns, chunks_per_turn, context_window)
    rows = exact_rows(plans, tokens)
    at = min(SEED_TURN, len(turns))
    first = max(1, min(at - 1, len(turns) - 2))
    checks = [
        {"placement": p, **row}
        for p in RAG_PLACEMENTS
        for row in run_chain(prober, chain_calls(plans[p], plans[f"{p}+rewrite"], first), tokens)
    ]
    sample = plans[RAG_TAIL][0].messages
    rendered = sum(len(m["content"]) for m in sample)
    chars_per_token = rendered / len(tokens(sample))
    cells = design(max(r["evaluated_tokens"] for r in rows), max(r["reused_tokens"] for r in rows))
    text = " ".join(" ".join(c) for c in chunks_per_turn)
    tail, front = at_turn(rows, RAG_TAIL, at), at_turn(rows, RAG_FRONT, at)
    tail_nc = (tail["evaluated_tokens"], tail["reused_tokens"])
    front_nc = (front["evaluated_tokens"], front["reused_tokens"])
    fit, rounds = sample_until(
        lambda r: calibration_round(prober, tokens, text, cells, chars_per_token, r),
        lambda f: f.ratio(front_nc, tail_nc),
        target=target,
        min_rounds=min_rounds,
        max_rounds=max_rounds,
        over_budget=lambda: budget_s is not None and time.perf_counter() - started >= budget_s,
    )
    rows = [asdict(modelled(row, fit)) for row in rows]
    value, low, high = fit.ratio(front_nc, tail_nc)
    result: dict[str, Any] = {
        "backend": backend,
        "model": getattr(prober, "name", backend),
        "context_window": context_window,
        "turns": len(turns),
        "rows": rows,
        "tokens": {
            "turn": at,
            RAG_TAIL: tail["evaluated_tokens"],
            RAG_FRONT: front["evaluated_tokens"],
            "front_over_tail": front["evaluated_tokens"] / tail["evaluated_tokens"],
            "by_series": {k: at_turn(rows, k, at)["evaluated_tokens"] for k in SERIES},
        },
        "modelled": {
            "turn": at,
            "front_over_tail": {"mean": value, "low": low, "high": high},
            "half_width": (high - low) / 2 / value,
            "target": target,
            "met": (high - low) / 2 <= target * value,
            "verdict": "met" if (high - low) / 2 <= target * value else "not met",
            "seed": "inside" if low <= SEED_RATIO <= high else ("above" if high < SEED_RATIO else "below"),
            "rounds": rounds,
        },
        "seed_front_over_tail": SEED_RATIO,
        "cost_model": fit.summary() | {"cells": [list(c) for c in cells]},
        "calibration": [asdict(p) for p in fit.points],
        "checks": (checks := [c | direct(c, fit) for c in checks]),
        "summary": summarize(rows, checks, at),
        "check_summary": check_summary(checks),
        "reload": reload_cost(backend, context_window, context_window // 2, sample),
    }
    if replays:
        result["replay"] = replay_check(prober, plans, fit, replays)
    return result | {"seconds": time.perf_counter() - started}


def summarize(rows: Sequence[dict[str, Any]], checks: Sequence[dict[str, Any]], at: int) -> dict[str, Any]:
    """Per series at turn ``at``: its exact tokens and modelled ms, and where a real call timed that very
    turn (tail and front), the measured ms beside it and their front/tail ratio."""
    keep = ("turn", "prompt_tokens", "evaluated_tokens", "reused_tokens", "modelled_ms")
    out: dict[str, Any] = {
        key: {k: row[k] for k in (*keep, "modelled_low", "modelled_high")}
        for key in SERIES
        if (row := at_turn(rows, key, at))
    }
    for c in checks:
        if c["call"] == f"turn {at}" and c["ms"]:
            out[c["placement"]] |= {"timed_ms": c["ms"], "timed_over_modelled": c["measured_over_modelled"]}
    if "timed_ms" in out[RAG_TAIL] and "timed_ms" in out[RAG_FRONT]:
        out["timed_front_over_tail"] = out[RAG_FRONT]["timed_ms"] / out[RAG_TAIL]["timed_ms"]
    return out


def modelled(row: dict[str, Any], fit: Fit) -> TurnRow:
    ms, low, high = fit.ms(row["evaluated_tokens"], row["reused_tokens"])
    return TurnRow(**row, modelled_ms=ms, modelled_low=low, modelled_high=high)


def direct(check: dict[str, Any], fit: Fit) -> dict[str, Any]:
    """A real call's time beside the model's for the same (evaluated, context)."""
    ms, _, _ = fit.ms(check["evaluated_tokens"], check["reused_tokens"])
    return {"modelled_ms": ms, "measured_over_modelled": check["ms"] / ms if check["ms"] else None}


def check_summary(checks: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How many real calls (warm-ups excluded: on a server the slot's earlier content is unknown) the
    accounting matched exactly, could not be checked, or missed."""
    out = {"calls": 0, "equal": 0, "not reported": 0, "differs": 0}
    for c in checks:
        if c["call"] != "evict":
            out["calls"] += 1
            out[c["verdict"]] += 1
    return out


BUDGET_S = 240.0
"""No new round of the cost model's sample after this many seconds of the study."""


def at_least_three(value: int) -> str | None:
    return (
        None
        if value >= 3
        else f"must be at least 3 (turns {SEED_TURN - 1}..{SEED_TURN + 1} are checked), got {value}"
    )


PARAMS = (
    Param("backend", str, "embedded:gemma3-270m", "backend spec: embedded:MODEL, ollama://..., openai://..."),
    Param(
        "tokenizer",
        str,
        None,
        "GGUF (path or embedded alias) whose tokenizer and chat template give a server's token sequences "
        "(default: the server's model when it names an embedded alias)",
    ),
    CORPUS,
    Param("turns", int, 16, "conversation turns", check=at_least_three),
    Param("context_window", int, 8192, "the model's context window", check=positive),
    Param(
        "rounds",
        int,
        3,
        "at most N rounds of the cost model's planned sample (more only while the ratio's interval "
        "exceeds ±5%)",
        check=positive,
    ),
    Param("budget", float, BUDGET_S, "start no new sample round after S seconds (measured)", metavar="S"),
    Param(
        "replay",
        int,
        0,
        "also replay whole conversations N times per placement, timed, to check the model (the old protocol)",
        check=not_negative,
    ),
    STORE,
)


def compute(params: Params) -> dict[str, Any]:
    """The study from its declared parameters."""
    conversation, chunks = conversation_from_corpus(params.corpus, params.turns)
    return run_study(
        params.backend,
        conversation,
        chunks,
        context_window=params.context_window,
        tokenizer=params.tokenizer,
        max_rounds=params.rounds,
        budget_s=params.budget,
        replays=params.replay,
    )


def load_or_run(
    *,
    recompute: bool = False,
    stored: Path | None = None,
    publish: Callable[[Result], dict[str, Path]] | None = None,
    **given: Any,
) -> dict[str, Any]:
    """The stored study in ``stored`` (default: ``given["out"]``) if present (and not ``recompute``), else
    run it on ``given`` (declared parameter names), store its rows in the workspace store (``study_rows``,
    study ``placement``) and, given ``publish`` (the publish ring's writer), write it to ``given["out"]``:
    the notebook's call, which reads the published run back without writing there."""
    previous = Path(stored if stored is not None else given["out"]) / "placement.json"
    if previous.exists() and not recompute:
        return json.loads(previous.read_text())
    value, _ = execute(STUDY, given, publish=publish)
    return value.value


def result(raw: dict[str, Any]) -> Result:
    """``placement.json`` (every row, check and fit), its page and the plot."""
    return STUDY.documented(raw, raw, figures=(Figure("prefill_vs_turn.png", partial(draw, raw)),))


STUDY = Study(
    name="placement",
    title="Prefill by RAG placement on the embedded model",
    run=compute,
    rows=lambda result: result["rows"],
    pages=pages,
    figures=("prefill_vs_turn.png",),
    stage=30,
    notebook="placement",
)
