"""The placement protocol on a server: ``nomad-lab serve`` on 127.0.0.1 over both wires (Ollama's
``/api/chat`` and the OpenAI-compatible ``/v1``), and a real Ollama when OLLAMA_HOST is set (skipped,
with the reason shown, otherwise; OLLAMA_TEST_MODEL picks the model and OLLAMA_TEST_TOKENIZER the GGUF
whose tokenizer stands for it)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest

from nomad_lab.serve.process import ServerProcess, free_port, shim_command
from nomad_lab.studies.budgeting.placement import probe, run_study
from nomad_lab.studies.budgeting.placement_calls import Tokens, chain_calls, run_chain, series_plans
from nomad_lab.studies.budgeting.transport import base_url

TURNS = [
    (f"Question {i}: how do I store water for {i} days?", "Keep it sealed and dark. " * 4) for i in range(4)
]
CHUNKS = [[f"Retrieved chunk {i} about storage containers and rotation. " * 4] for i in range(4)]
HOST = os.environ.get("OLLAMA_HOST", "").strip()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.allow_hosts(["127.0.0.1", "::1", "localhost", urlparse(base_url(HOST)).hostname or ""]),
]


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    port = free_port()
    argv = shim_command("gemma3-270m", port, num_ctx=2048)
    with ServerProcess(argv, host="127.0.0.1", port=port, ready_path="/api/version") as server:
        yield server.base_url.removeprefix("http://")


def _spec(wire: str, host: str, model: str) -> str:
    return f"ollama://{host}/{model}" if wire == "ollama" else f"openai://{host}/v1/{model}"


@pytest.fixture(scope="module")
def study(served: str) -> dict:
    """The whole study over Ollama's wire; its tail-placement calls are the Ollama wire's count check."""
    spec = _spec("ollama", served, "gemma3-270m:latest")
    return run_study(spec, TURNS, CHUNKS, context_window=2048, max_rounds=1)


@pytest.mark.parametrize("wire", ["ollama", "openai"])
def test_the_server_counts_what_the_accounting_says(
    served: str, wire: str, request: pytest.FixtureRequest
) -> None:
    """Turns 2 and 3, a rewrite, turn 4: the served model's counts (whole prompt, cached tokens) and
    prompt time come back over the wire and equal the accounting's, call by call. Over Ollama's wire
    these are the study's own tail-placement calls (the same chain, made once); over /v1 they are made
    here."""
    plans = series_plans(TURNS, CHUNKS, 2048)
    calls = chain_calls(plans["tail"], plans["tail+rewrite"], 2)
    if wire == "ollama":
        rows = [c for c in request.getfixturevalue("study")["checks"] if c["placement"] == "tail"]
        assert [r["call"] for r in rows[1:]] == [label for label, _ in calls]  # the same chain
    else:
        prober = probe(_spec(wire, served, "gemma3-270m:latest"), 2048)
        rows = run_chain(prober, calls, Tokens(prober))
    checked = rows[1:]  # the warm-up call's reuse depends on what the server held before it
    assert [r["verdict"] for r in checked] == ["equal"] * 4, checked
    assert checked[1]["reused_tokens"] > checked[0]["reused_tokens"]  # tail kept the prefix
    assert checked[3]["reused_tokens"] < checked[1]["reused_tokens"]  # the rewrite evicted it
    assert all(r["ms"] for r in checked if r["evaluated_tokens"] > 1)


def test_the_whole_study_runs_against_the_server(study: dict) -> None:
    assert study["check_summary"]["equal"] == study["check_summary"]["calls"] == 8
    assert study["reload"] is None and study["cost_model"]["points"] >= 6
    assert study["tokens"]["front"] > study["tokens"]["tail"]


def test_a_server_spec_without_a_known_tokenizer_stops_with_the_option_to_pass(served: str) -> None:
    with pytest.raises(ValueError, match="--tokenizer"):
        probe(_spec("ollama", served, "llama3:8b"), 2048)


@pytest.mark.live
def test_live_ollama_reports_prompt_counts_and_time_per_call() -> None:
    if not HOST:
        pytest.skip("OLLAMA_HOST is not set: no real Ollama server to run the placement protocol against")
    import httpx

    from nomad_lab.backends.ollama_native import OllamaBackend

    base = base_url(HOST)
    try:
        httpx.get(f"{base}/api/version", timeout=5).raise_for_status()
    except httpx.HTTPError as exc:
        pytest.skip(f"OLLAMA_HOST={HOST} does not answer: {exc}")
    model = os.environ.get("OLLAMA_TEST_MODEL") or next(
        (m.name for m in OllamaBackend(base).list_models() if "embed" not in m.name), ""
    )
    if not model:
        pytest.skip(f"the Ollama at {base} has no chat model installed")
    tokenizer = os.environ.get("OLLAMA_TEST_TOKENIZER")
    if not tokenizer:
        pytest.skip(
            "OLLAMA_TEST_TOKENIZER is not set: the GGUF of the served model is needed to check counts"
        )
    prober = probe(f"ollama://{urlparse(base).netloc}/{model}", 2048, tokenizer)
    plans = series_plans(TURNS, CHUNKS, 2048)
    rows = run_chain(prober, chain_calls(plans["tail"], plans["tail+rewrite"], 2), Tokens(prober))[1:]
    assert all(r["engine_prompt_tokens"] > 0 and r["ms"] is not None for r in rows)
    # Ollama renders its own template: prompt counts may differ from the GGUF template's by a rule the
    # page names, but the tail turn must reuse more than the turn after a rewrite wherever it says
    if rows[1]["engine_reused_tokens"] is not None:
        assert rows[1]["engine_reused_tokens"] > rows[3]["engine_reused_tokens"]
