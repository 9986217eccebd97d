"""Prompt text for models whose chat format cannot carry system messages.

llama-cpp-python's built-in ``gemma`` format silently drops every ``system`` message (it only logs at
debug level). In nomad-lab's pipeline the judge instructions, the retrieved-context block and the
history-elision marker are all system messages, so with that format an embedded Gemma would never
see any of them. Gemma's own chat template instead folds the system text into the next user turn;
``fold_system_messages`` does the same for every system message wherever it sits, so nothing is
lost and a tail-placed block stays at the tail (the embedded backend formats with it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def fold_system_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Merge each run of system messages into the following user message (or a user turn of its own).

    Order is preserved; system text comes first, separated from the user text by a blank line.
    """
    folded: list[dict[str, str]] = []
    pending: list[str] = []
    for message in messages:
        role, content = message.get("role"), str(message.get("content") or "")
        if role == "system":
            pending.append(content)
            continue
        if role == "user" and pending:
            content = "\n\n".join([*pending, content])
            pending = []
        elif pending:
            folded.append({"role": "user", "content": "\n\n".join(pending)})
            pending = []
        folded.append({"role": str(role), "content": content})
    if pending:
        folded.append({"role": "user", "content": "\n\n".join(pending)})
    return folded
