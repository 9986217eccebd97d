"""The chat backend kinds by prefix: each module here ends with ``KIND = ChatKind(...)`` and is registered by
existing (simonw/llm's ``register_models``, without the plugin machinery).

Why: a backend used to be three edits in two places (the accepted-forms text, the parser's if-chain and
the opener's); now the forms shown in help texts and errors, the parser that reads a spec and the opener
that makes the backend are declared together, in one module per kind, and
:func:`nomad_lab.backends.backend_spec.parse_spec` and :func:`nomad_lab.backends.open_backend` only look them
up.
A new backend is one module in this package (``tests/backends/test_chat_kinds.py`` drops one in).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nomad_lab.core.module_walk import claimed_kinds

PACKAGES = (__name__,)
"""Where kinds are looked for; a test adds a temporary package to show that one module is enough."""


@dataclass(frozen=True)
class ChatKind:
    """One kind of chat backend.

    ``name`` is the parsed spec's ``kind``; ``prefixes`` start its spec strings (``ollama://``,
    ``embedded:``); ``forms`` are ``(form, what it opens)`` lines for help and errors; ``options`` the
    query options it reads. ``parse(text, prefix)`` returns a ``BackendSpec`` or raises the spec error
    (``nomad_lab.backends.backend_spec.bad_spec``); ``open(spec)`` makes the backend, importing its client
    library only then.
    """

    name: str
    prefixes: tuple[str, ...]
    forms: tuple[tuple[str, str], ...]
    parse: Callable[[str, str], Any]
    open: Callable[[Any], Any]
    options: str = ""


def kinds() -> dict[str, ChatKind]:
    """Every registered kind by name, in module order; two kinds claiming one name or prefix are refused."""
    return claimed_kinds(PACKAGES, ChatKind, lambda kind: (kind.name, *kind.prefixes))
