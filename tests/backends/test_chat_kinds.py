"""A new chat backend is one module: dropped into a package, it is parsed, listed in help texts and errors,
opened, and checked at the edge of a study's parameters, with no other file touched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nomad_lab.backends import (
    BACKEND_SPEC,
    ChatOptions,
    ChatRequest,
    accepted_forms,
    open_backend,
    parse_spec,
)
from nomad_lab.backends import chat_kinds as registry
from nomad_lab.cli import main
from nomad_lab.core.errors import NomadLabError
from nomad_lab.studies.shape import Param, resolve_params
from tests.support.registries import dropped_package

ECHO_KIND = '''"""``echo:PREFIX``: answers every chat with PREFIX and the last user message (no model)."""

from __future__ import annotations

from nomad_lab.backends import ChatRequest, ChatResult, ModelEntry, ModelInfo, Usage
from nomad_lab.backends.chat_kinds import ChatKind
from nomad_lab.backends.backend_spec import BackendSpec, bad_spec


class EchoBackend:
    kind = "echo"

    def __init__(self, prefix: str) -> None:
        self.model = prefix

    def chat(self, request: ChatRequest) -> ChatResult:
        text = f"{self.model}: {request.messages[-1]['content']}"
        return ChatResult(text, "", Usage(1, len(text), None, None, "echo"), "stop")

    def chat_stream(self, request):
        raise NotImplementedError

    def show(self, model=None) -> ModelInfo:
        return ModelInfo(name=self.model)

    def list_models(self) -> list[ModelEntry]:
        return []


def parse(text: str, prefix: str) -> BackendSpec:
    word = text[len(prefix) :]
    if not word.isalpha():
        raise bad_spec(text, "echo: takes a word")
    return BackendSpec("echo", text, model=word)


KIND = ChatKind("echo", ("echo:",), (("echo:WORD", "answers WORD: and the last message"),), parse,
                lambda spec: EchoBackend(spec.model))
'''


@pytest.fixture
def echo_registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from dropped_package(
        tmp_path, monkeypatch, registry, "more_chat_kinds", {"echo_chat.py": ECHO_KIND}
    )


def test_the_registered_kinds_are_the_four_forms_the_project_documents() -> None:
    kinds = registry.kinds()
    assert set(kinds) == {"ollama", "openai", "auto", "embedded"}
    prefixes = [p for kind in kinds.values() for p in kind.prefixes]
    assert sorted(prefixes) == sorted(
        ["ollama://", "openai://", "openai+noformat://", "auto://", "embedded:"]
    )
    listed = accepted_forms()
    assert all(form in listed for kind in kinds.values() for form, _ in kind.forms)
    assert "?format=auto|json_schema|json_object|none" in listed


def test_a_new_backend_is_one_module(echo_registered: None, capsys: pytest.CaptureFixture[str]) -> None:
    parsed = parse_spec("echo:parrot")
    assert (parsed.kind, parsed.model, parsed.text) == ("echo", "parrot", "echo:parrot")
    backend = open_backend("echo:parrot")
    answer = backend.chat(ChatRequest([{"role": "user", "content": "hello"}], ChatOptions()))
    assert answer.content == "parrot: hello"

    with pytest.raises(ValueError, match="unknown scheme 'nope'") as refused:
        parse_spec("nope://h:1/m")
    assert "echo:WORD" in str(refused.value) and "ollama://HOST:PORT/MODEL" in str(refused.value)
    with pytest.raises(ValueError, match="echo: takes a word"):
        parse_spec("echo:42")

    with pytest.raises(SystemExit):
        main(["eval", "retrieval", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "echo:WORD" in shown and "embedded:/path/to/model.gguf" in shown

    declared = (Param("judge_model", BACKEND_SPEC, None, "judge backend spec"),)
    assert resolve_params(declared, {"judge_model": " echo:parrot "}, "study x").judge_model == "echo:parrot"
    with pytest.raises(NomadLabError) as bad:
        resolve_params(declared, {"judge_model": "echo-parrot"}, "study x")
    line = str(bad.value)
    assert "\n" not in line and line.startswith("study x: --judge-model 'echo-parrot': bad backend spec")
    assert "echo:WORD" in line


def test_two_kinds_claiming_one_prefix_are_refused(
    echo_registered: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "more_chat_kinds" / "echo_twin.py").write_text(
        ECHO_KIND.replace('"echo", ("echo:",)', '"echo2", ("echo:",)')
    )
    with pytest.raises(
        NomadLabError, match=r"more_chat_kinds.echo_twin: 'echo:' is already more_chat_kinds.echo_chat's"
    ):
        registry.kinds()
