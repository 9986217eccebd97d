"""The old protocol, kept as an opt-in check: replay whole conversations and time every turn.

Why keep it: the cost model predicts every turn's prefill from exact token counts and a planned sample
of timings; replaying the conversations themselves (``nomad-lab study placement --replay N``) is the
independent evidence that the prediction holds for the real sequence of calls. It is not the headline
any more: a replay costs 32 model calls and ~40,000 prefilled tokens per pair on the embedded model,
and its answer moves with the machine's load (the same calls gave 1.40x, 2.16x and 2.34x on three runs).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

from nomad_lab.core.prefix_cache import Slot
from nomad_lab.core.reference import RAG_FRONT, RAG_PLACEMENTS, RAG_TAIL
from nomad_lab.studies.budgeting.placement_calls import EVICT, Prober, Turn
from nomad_lab.studies.budgeting.placement_report import SEED_TURN
from nomad_lab.studies.budgeting.prefill_cost import Fit


def replay(prober: Prober, plan: Sequence[Turn]) -> list[dict[str, Any]]:
    """Every turn of one series, in order on one slot after :data:`EVICT`: the engine's counts and ms."""
    prober.forget_prefix()
    prober.prefill_messages(EVICT)
    out = []
    for turn in plan:
        if turn.rewrite is not None:
            prober.prefill_messages(turn.rewrite)
        done = prober.prefill_messages(turn.messages)
        out.append({"turn": turn.number, "evaluated_tokens": done.evaluated_tokens, "ms": done.ms})
    return out


def line_at(turns: Sequence[int], ms: Sequence[float], turn: int) -> float:
    """A series' least-squares line over all its turns, read at ``turn``: steadier than one sample."""
    slope, intercept = np.polyfit(turns, ms, 1)
    return float(slope * min(turn, max(turns)) + intercept)


def t_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and 95% Student-t interval of independent replays' estimates (nan bounds for one)."""
    from scipy.stats import t  # heavy

    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, float("nan"), float("nan")
    half = float(t.ppf(0.975, len(values) - 1)) * statistics.stdev(values) / len(values) ** 0.5
    return mean, mean - half, mean + half


def replay_check(prober: Prober, plans: dict[str, list[Turn]], fit: Fit, replays: int) -> dict[str, Any]:
    """``replays`` paired replays of both placements: each replay's turn-14 front/tail ratio (off its
    fitted lines), their t interval, and every turn's measured ms over the model's for its exact
    (evaluated, context) tokens."""
    ratios, per_turn = [], []
    for _ in range(replays):
        at: dict[str, float] = {}
        for placement in RAG_PLACEMENTS:
            rows = replay(prober, plans[placement])
            at[placement] = line_at([r["turn"] for r in rows], [r["ms"] for r in rows], SEED_TURN)
            per_turn += [
                {"placement": placement, **r, "modelled_ms": fit.ms(*nc)[0]}
                for r, nc in zip(rows, exact_nc(prober, plans[placement]), strict=True)
            ]
        ratios.append(at[RAG_FRONT] / at[RAG_TAIL])
    mean, low, high = t_interval(ratios)
    errors = [r["ms"] / r["modelled_ms"] - 1 for r in per_turn if r["ms"]]
    return {
        "replays": replays,
        "ratios": ratios,
        "measured": {"mean": mean, "low": low, "high": high},
        "turns": per_turn,
        "median_abs_error": float(np.median(np.abs(errors))) if errors else None,
    }


def exact_nc(prober: Prober, plan: Sequence[Turn]) -> list[tuple[int, int]]:
    """(evaluated, context) of every chat turn of ``plan`` by the cache rule, after :data:`EVICT`."""
    slot = Slot()
    slot.call(prober.tokens(EVICT))
    out = []
    for turn in plan:
        if turn.rewrite is not None:
            slot.call(prober.tokens(turn.rewrite))
        charge = slot.call(prober.tokens(turn.messages))
        out.append((charge.evaluated_tokens, charge.reused_tokens))
    return out
