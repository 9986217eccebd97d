"""The placement study: exact tokens per turn, the cost model's interval, and real llama.cpp calls
checked against the accounting."""

from __future__ import annotations

import llama_cpp  # noqa: F401  required (the llm extra): missing is a failure, not a skip
import numpy as np
import pytest

from nomad_lab.backends.base import Prefill
from nomad_lab.core.prefix_cache import Slot

TURNS = [
    (f"Question {i}: how do I store water for {i} days?", "Keep it sealed and dark. " * 4) for i in range(4)
]
CHUNKS = [[f"Retrieved chunk {i} about storage containers and rotation. " * 4] for i in range(4)]


class ScriptedProber:
    """A prober over a fake tokenizer (one token per word) and a true KV-prefix slot, timed by a known
    cost function ``2 + 0.5 n + 0.001 n (c + n/2)`` ms times a noise factor cycling through ``noise``."""

    COEF = (2.0, 0.5, 0.001)

    def __init__(self, noise: tuple[float, ...] = (1.0,)) -> None:
        self.slot, self.noise, self.calls = Slot(), noise, 0

    def tokens(self, messages: list) -> list[int]:
        text = " ".join(f"<{m['role']}> {m['content']}" for m in messages)
        return [hash(word) % 50_000 for word in text.split()]

    def prefill_messages(self, messages: list) -> Prefill:
        charge = self.slot.call(self.tokens(messages))
        n, c = charge.evaluated_tokens, charge.reused_tokens
        fixed, per_token, per_pair = self.COEF
        factor = self.noise[self.calls % len(self.noise)]
        self.calls += 1
        ms = (fixed + per_token * n + per_pair * n * (c + n / 2)) * factor
        return Prefill(charge.prompt_tokens, n, c, ms)

    def forget_prefix(self) -> None:
        self.slot.forget()


def _study(monkeypatch: pytest.MonkeyPatch, prober: ScriptedProber, **kwargs):
    from nomad_lab.studies.budgeting import placement

    monkeypatch.setattr(placement, "probe", lambda backend, n_ctx, tokenizer=None: prober)
    return placement.run_study("scripted:", TURNS * 4, CHUNKS, context_window=4096, **kwargs)


def test_tokens_per_turn_are_exact_and_the_real_calls_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    result = _study(monkeypatch, ScriptedProber())
    by = {(r["placement"], r["rewrite_between"], r["turn"]): r for r in result["rows"]}
    assert len(result["rows"]) == 4 * 16
    # tail reuses everything before the new block and turn; front re-evaluates history after its block
    assert by[("tail", False, 14)]["evaluated_tokens"] < by[("front", False, 14)]["evaluated_tokens"]
    assert by[("tail", False, 14)]["reused_tokens"] > by[("tail", False, 13)]["reused_tokens"]
    # a rewrite call on the slot evicts the chat prefix: tail loses its advantage
    assert by[("tail", True, 14)]["evaluated_tokens"] > by[("front", False, 14)]["evaluated_tokens"]
    assert (
        by[("tail", True, 14)]["rewrite_evaluated_tokens"]
        > 0
        == by[("tail", False, 14)]["rewrite_evaluated_tokens"]
    )
    assert result["tokens"]["front_over_tail"] == pytest.approx(
        by[("front", False, 14)]["evaluated_tokens"] / by[("tail", False, 14)]["evaluated_tokens"]
    )
    summary = result["check_summary"]
    assert summary["calls"] == 8 and summary["equal"] == 8  # turns 13, 14, rewrite, 15 per placement


def test_a_steady_machine_meets_the_target_in_one_round_with_the_true_ratio(monkeypatch) -> None:
    from nomad_lab.studies.budgeting.placement_report import markdown

    result = _study(monkeypatch, ScriptedProber())
    model = result["modelled"]
    assert model["rounds"] == 1 and model["met"]
    fixed, per_token, per_pair = ScriptedProber.COEF
    rows = {(r["placement"], r["rewrite_between"], r["turn"]): r for r in result["rows"]}

    def true_ms(row: dict) -> float:
        n, c = row["evaluated_tokens"], row["reused_tokens"]
        return fixed + per_token * n + per_pair * n * (c + n / 2)

    expected = true_ms(rows[("front", False, 14)]) / true_ms(rows[("tail", False, 14)])
    assert model["front_over_tail"]["mean"] == pytest.approx(expected, rel=1e-6)
    assert "target is met" in markdown(result)


def test_a_noisy_machine_samples_more_rounds_until_the_target_or_the_cap(monkeypatch) -> None:
    noisy = _study(monkeypatch, ScriptedProber((1.0, 1.5, 0.7, 1.3, 0.8, 1.2, 0.6)), max_rounds=3)
    assert noisy["modelled"]["rounds"] == 3 and not noisy["modelled"]["met"]
    capped = _study(monkeypatch, ScriptedProber((1.0, 1.5, 0.7)), max_rounds=5, budget_s=0.0)
    assert capped["modelled"]["rounds"] == 1  # the budget is spent: no round beyond the first
    from nomad_lab.studies.budgeting.placement_report import markdown

    assert "target is NOT met" in markdown(noisy)


def test_the_cost_model_recovers_planted_coefficients_and_brackets_a_ratio() -> None:
    from nomad_lab.studies.budgeting.prefill_cost import Fit, Point

    rng = np.random.default_rng(1)
    coef = np.array([30.0, 3.0, 0.002])
    points = []
    for n, c in [(128, 0), (1024, 0), (2048, 0), (128, 1500), (1024, 1500), (2048, 1500)] * 3:
        ms = coef @ [1, n, n * (c + n / 2)] * (1 + rng.normal(0, 0.02))
        points.append(Point(n, c, float(ms)))
    fit = Fit.of(points)
    assert fit.coef == pytest.approx(coef, rel=0.25)
    truth = (coef @ [1, 2000, 2000 * 1000]) / (coef @ [1, 800, 800 * (1400 + 400)])
    value, low, high = fit.ratio((2000, 0), (800, 1400))
    assert low < value < high and low <= truth <= high
    assert max(abs(r) for r in fit.residuals()) < 0.1


def test_the_design_spans_the_turns_it_models() -> None:
    from nomad_lab.studies.budgeting.prefill_cost import design

    cells = design(2400, 1800)
    assert {c for _, c in cells} == {0, 1800} and {n for n, _ in cells} == {128, 1200, 2400}


@pytest.mark.slow
def test_real_llama_cpp_calls_count_what_the_accounting_says() -> None:
    """A sample of real embedded calls (turns 2-4 of each placement and a rewrite between): llama.cpp's
    own prompt counts and reuse equal the accounting's, call by call."""
    from nomad_lab.studies.budgeting.placement import probe
    from nomad_lab.studies.budgeting.placement_calls import Tokens, chain_calls, run_chain, series_plans

    prober = probe("embedded:gemma3-270m", 2048)
    plans = series_plans(TURNS, CHUNKS, 2048)
    tokens = Tokens(prober)
    for placement in ("tail", "front"):
        rows = run_chain(prober, chain_calls(plans[placement], plans[f"{placement}+rewrite"], 2), tokens)
        assert [r["verdict"] for r in rows] == ["equal"] * 5, rows
        assert all(r["engine_prompt_tokens"] == r["prompt_tokens"] for r in rows)
        assert rows[-1]["reused_tokens"] < rows[-3]["reused_tokens"]  # the rewrite evicted the prefix
