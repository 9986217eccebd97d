"""The transport effect on the Ollama-API shim: /v1 cannot send num_ctx, so a long prompt is truncated."""

from __future__ import annotations

import pytest

from nomad_lab.cli import main
from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR
from nomad_lab.studies.budgeting.transport import NeedsOllamaError, long_prompt, measure, resolve_host
from tests.support.ollama_checks import shim_target


def test_without_a_server_it_says_it_needs_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    with pytest.raises(NeedsOllamaError, match="needs a real Ollama server: set OLLAMA_HOST"):
        resolve_host(None)
    assert main(["study", "transport", "--model", "llama3"]) == 1
    assert "needs a real Ollama server" in capsys.readouterr().err
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box")
    assert resolve_host(None) == "http://gpu-box:11434"


def test_long_prompt_has_the_asked_length() -> None:
    prompt = long_prompt(DEFAULT_CORPUS_DIR, 5000)
    assert prompt.startswith("#") and 5000 < len(prompt) < 5100


WINDOW = 256
"""The default window of the shim this test starts: /v1 runs at it. Any window shows the effect; a small
one keeps the prefill short (at Ollama's 2,048 the prompt had to be over 2,048 tokens, sent twice)."""


@pytest.mark.slow
def test_v1_processes_fewer_tokens_than_native_on_a_long_prompt() -> None:
    """The shim runs /v1 at its default window, as Ollama runs /v1 at its default. 1,200 characters of the
    corpus are about 360 SmolLM2 tokens: over the window, and within the twice larger num_ctx sent
    natively."""
    with shim_target(num_ctx=WINDOW) as shim:
        prompt = long_prompt(DEFAULT_CORPUS_DIR, 1_200)
        result = measure(shim.base_url, shim.model, prompt, num_ctx=2 * WINDOW)
        assert result.native_prompt_tokens and result.v1_prompt_tokens
        assert 2 * WINDOW >= result.native_prompt_tokens > WINDOW >= result.v1_prompt_tokens
        assert result.lost_on_v1 == result.native_prompt_tokens - result.v1_prompt_tokens > 0
        assert shim.sent("/api/chat")[-1]["options"]["num_ctx"] == 2 * WINDOW
        assert "num_ctx" not in str(shim.sent("/v1/chat/completions")[-1])
