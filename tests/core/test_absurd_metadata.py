"""Absurd model metadata from a server or a GGUF file is bounded on the way in, never allocated.

The Ollama path is exercised over real HTTP (a scripted server on 127.0.0.1 answering ``/api/show``
with negative, astronomically large, non-numeric and wrongly typed values) through ``OllamaBackend``
and the context resolver; the embedded path through ``show_payload`` over GGUF metadata strings as
llama.cpp hands them over, and through the one place a context is allocated (``load_model``), with
llama.cpp's ``Llama`` replaced by a recorder so nothing real is allocated even if the bound failed.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import pytest

from nomad_lab.backends import BackendError
from nomad_lab.backends.base import model_info_from_show
from nomad_lab.backends.embedded import EmbeddedBackend
from nomad_lab.backends.llama_models import (
    DEFAULT_N_CTX,
    MAX_N_CTX,
    LoadedModel,
    bounded_n_ctx,
    show_payload,
)
from nomad_lab.backends.ollama_native import OllamaBackend
from nomad_lab.core.context_window import CONTEXT_LADDER, GGUF_U32_MAX, ContextWindowResolver
from tests.support.fake_ollama import FakeServer

GiB = 1024**3
HUGE = "9" * 5000  # int() of this raises in Python 3.11 (4,300-digit limit), so it must never be int()ed


def info(**model_info: object) -> dict[str, object]:
    return {"model_info": {"general.architecture": "llama", **model_info}}


SHOW_BODIES: dict[str, str] = {
    "negative": json.dumps(
        {**info(**{"llama.context_length": -4096, "llama.block_count": -1}), "parameters": "num_ctx -5"}
    ),
    "huge": json.dumps(
        {
            **info(
                **{
                    "llama.context_length": 1e308,
                    "llama.block_count": 10**20,
                    "llama.attention.head_count_kv": 1e300,
                    "llama.attention.key_length": 1e300,
                }
            ),
            "parameters": "num_ctx 99999999999999999999999",
            "details": {"parameter_size": "1e300B"},
        }
    ),
    "just past uint32": json.dumps(info(**{"llama.context_length": GGUF_U32_MAX + 1})),
    "5000-digit literal": '{"model_info": {"general.architecture": "llama", "llama.context_length": '
    + HUGE
    + "}}",
    "5000-digit num_ctx line": json.dumps({"model_info": {}, "parameters": f"num_ctx {HUGE}"}),
    "non-numeric": json.dumps(
        {**info(**{"llama.context_length": "lots", "llama.block_count": [1, 2]}), "parameters": "num_ctx x"}
    ),
    "NaN and Infinity": '{"model_info": {"general.architecture": "llama", '
    '"llama.context_length": Infinity, "llama.block_count": NaN}}',
    "wrong types": json.dumps({"model_info": {}, "details": {"parameter_size": 8}, "capabilities": "all"}),
    "parameters not text": json.dumps({**info(), "parameters": 4096, "capabilities": [1, "completion"]}),
    "not an object": "[1, 2, 3]",
}


def serve_show(body: str):
    def reply(path: str) -> tuple[int, str, str]:
        if path == "/api/show":
            return 200, "application/json", body
        return 200, "application/json", json.dumps({"models": []})

    return reply


@pytest.mark.parametrize("case", list(SHOW_BODIES))
def test_absurd_api_show_is_bounded_or_refused_as_a_bad_response(case: str) -> None:
    with FakeServer(serve_show(SHOW_BODIES[case])) as server:
        backend = OllamaBackend(f"http://127.0.0.1:{server.port}", "m", timeout=5)
        tracemalloc.start()
        try:
            try:
                shown = backend.show()
            except BackendError as exc:
                assert exc.reason == "bad-response", exc
                shown = None
            window = ContextWindowResolver(backend.show, available_bytes=16 * GiB).resolve("m")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    if shown is not None:
        assert shown.context_length is None or 0 < shown.context_length <= GGUF_U32_MAX
        assert shown.modelfile_num_ctx is None or shown.modelfile_num_ctx < 2**63
        assert all(isinstance(c, str) for c in shown.capabilities)
    assert CONTEXT_LADDER[0] <= window.tokens <= CONTEXT_LADDER[-1]
    assert peak < 32 * 1024**2  # a parse and a resolve, never a buffer sized by the metadata


def fake_loaded(metadata: dict[str, str], n_params: int = 268_098_176) -> LoadedModel:
    llama = SimpleNamespace(metadata=metadata, _model=SimpleNamespace(n_params=lambda: n_params))
    return LoadedModel(llama, Path("/models/x.gguf"), 4096, None, 0.0)  # type: ignore[arg-type]


def test_absurd_gguf_metadata_strings_parse_without_raising_and_are_ignored() -> None:
    payload = show_payload(
        fake_loaded(
            {
                "general.architecture": "llama",
                "llama.context_length": HUGE,
                "llama.block_count": "-3",
                "llama.attention.head_count": "nan",
                "llama.embedding_length": "1e999",
                "general.file_type": "99999999999999999999999",
            },
            n_params=10**30,
        )
    )
    shown = model_info_from_show("x", payload)
    assert not isinstance(shown.model_info["llama.context_length"], int)  # never int()ed: it would raise
    assert shown.context_length is None and shown.quantization == "unknown"
    window = ContextWindowResolver(lambda _m: shown, available_bytes=16 * GiB).resolve("x")
    assert CONTEXT_LADDER[0] <= window.tokens <= CONTEXT_LADDER[-1]
    mistyped = {"parameters": 4096, "details": [1], "model_info": [2], "capabilities": 3}
    wrong = model_info_from_show("x", mistyped)
    assert (wrong.context_length, wrong.modelfile_num_ctx, wrong.capabilities) == (None, None, ())
    sane = fake_loaded({"general.architecture": "gemma3", "gemma3.context_length": "32768"})
    assert model_info_from_show("x", show_payload(sane)).context_length == 32768


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        (2048, 2048),
        (MAX_N_CTX, MAX_N_CTX),
        (MAX_N_CTX + 1, MAX_N_CTX),
        (10**15, MAX_N_CTX),
        (0, DEFAULT_N_CTX),  # llama.cpp would read 0 as "the GGUF's own context", unchecked
        (-5, DEFAULT_N_CTX),
        (None, DEFAULT_N_CTX),
        ("8192", DEFAULT_N_CTX),  # a string from a client's JSON
        (1e30, DEFAULT_N_CTX),
        (True, DEFAULT_N_CTX),
    ],
)
def test_bounded_n_ctx(requested: object, expected: int) -> None:
    assert bounded_n_ctx(requested) == expected


def test_an_absurd_num_ctx_never_reaches_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> None:
    import llama_cpp

    from nomad_lab.backends import llama_models

    allocated: list[int] = []

    class RecordingLlama:
        def __init__(self, model_path: str, n_ctx: int, **_: object) -> None:
            allocated.append(n_ctx)

        def close(self) -> None:
            pass

    monkeypatch.setattr(llama_cpp, "Llama", RecordingLlama)
    monkeypatch.setattr(llama_models, "_LOADED", {})
    backend = EmbeddedBackend("gemma3-270m", n_ctx=10**12)  # as from "embedded:gemma3-270m?n_ctx=10^12"
    assert backend.n_ctx == MAX_N_CTX
    backend.loaded()
    backend.loaded(-1)  # a shim client's num_ctx: falls back to the backend's own
    backend.loaded(10**15)
    backend.loaded(2048)
    assert allocated == [MAX_N_CTX, 2048]
