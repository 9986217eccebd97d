"""Prefill by placement on the real embedded model: tail reuses the cache, front and rewrites do not."""

from __future__ import annotations

from itertools import pairwise

import llama_cpp  # noqa: F401  required (the llm extra): missing is a failure, not a skip
import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llm():
    from nomad_lab.backends.models import gemma_path
    from nomad_lab.studies.budgeting.placement import probe

    return probe(gemma_path(), 2048)


TURNS = [
    (f"Question {i}: how do I store water for {i} days?", "Keep it sealed and dark. " * 4) for i in range(4)
]
CHUNKS = [[f"Retrieved chunk {i} about storage containers and rotation. " * 4] for i in range(4)]


def test_tail_keeps_the_prefix_and_front_does_not(llm) -> None:
    from nomad_lab.studies.budgeting.placement import replay

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
    from nomad_lab.studies.budgeting.placement import replay

    plain = replay(llm, TURNS, CHUNKS, placement="tail", context_window=2048)
    rewritten = replay(llm, TURNS, CHUNKS, placement="tail", context_window=2048, rewrite_between=True)
    assert rewritten[-1].reused_tokens < plain[-1].reused_tokens
    assert rewritten[-1].evaluated_tokens > plain[-1].evaluated_tokens


def test_summary_takes_the_median_of_repeats_and_fits_growth_per_turn() -> None:
    from dataclasses import asdict

    from nomad_lab.studies.budgeting.placement import TurnRow, median_rows, summarize

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


class ScriptedProbe:
    """A ``PrefillProbe`` over a fake tokenizer (one token per word) and a KV cache of the last prompt,
    timed at ``ms_per_token`` times a factor that cycles through ``noise`` per replay of the tail."""

    def __init__(self, noise: list[float], ms_per_token: float = 2.0) -> None:
        self.cache: list[str] = []
        self.noise, self.replays, self.ms_per_token = noise, 0, ms_per_token

    def render(self, messages: list) -> str:
        return "\n".join(f"{m['role']}: {m['content']}" for m in messages)

    def prefill(self, prompt: str):
        from nomad_lab.backends.base import Prefill

        tokens = prompt.split()
        reused = 0
        for a, b in zip(self.cache, tokens, strict=False):
            if a != b:
                break
            reused += 1
        reused = min(reused, len(tokens) - 1)
        self.cache = tokens
        factor = self.noise[self.replays % len(self.noise)]
        return Prefill(
            len(tokens), len(tokens) - reused, reused, (len(tokens) - reused) * self.ms_per_token * factor
        )

    def forget_prefix(self) -> None:
        self.cache = []
        self.replays += 1

    def load_ms(self) -> float:
        return 1.0


def _study_with(monkeypatch: pytest.MonkeyPatch, probe: ScriptedProbe, **kwargs):
    from nomad_lab.studies.budgeting import placement as prefill

    monkeypatch.setattr(prefill, "probe", lambda path, n_ctx: probe)
    return prefill.run_study("fake.gguf", TURNS * 4, CHUNKS, context_window=4096, **kwargs)


def test_a_steady_machine_stops_at_the_minimum_replays_and_reports_the_interval(monkeypatch) -> None:
    result = _study_with(monkeypatch, ScriptedProbe([1.0]), repeats=6, min_repeats=3)
    fit = result["front_over_tail_fit"]
    assert result["repeats"] == 3 and len(fit["replays"]) == 3
    assert fit["low"] == pytest.approx(fit["mean"]) == pytest.approx(fit["high"])
    assert fit["mean"] > 1  # front re-evaluates history, tail does not
    assert "95% CI" in __import__("nomad_lab.studies.budgeting.placement", fromlist=["markdown"]).markdown(
        result
    )


def test_a_noisy_machine_replays_until_the_interval_is_tight_or_the_cap(monkeypatch) -> None:
    from nomad_lab.studies.budgeting.placement import t_interval

    # the noise factor changes per replay of every series, so the paired front/tail ratio varies
    result = _study_with(monkeypatch, ScriptedProbe([1.0, 1.6, 0.7, 1.3, 0.8]), repeats=5, min_repeats=3)
    assert result["repeats"] == 5  # never within ±5% on this noise: capped
    mean, low, high = t_interval(result["front_over_tail_fit"]["replays"])
    assert (high - low) / 2 > 0.05 * mean
    capped = _study_with(monkeypatch, ScriptedProbe([1.0, 1.6, 0.7]), repeats=6, min_repeats=3, budget_s=0.0)
    assert capped["repeats"] == 3  # the budget is spent: no replay beyond the minimum


def test_t_interval_is_the_student_t_interval() -> None:
    from nomad_lab.studies.budgeting.placement import t_interval

    mean, low, high = t_interval([2.0, 2.2, 2.4])
    assert mean == pytest.approx(2.2)
    assert high - mean == mean - low == pytest.approx(4.302653 * 0.2 / 3**0.5, rel=1e-5)
