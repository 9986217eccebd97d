"""The embedder kinds by spec word: each module here ends with ``KIND = EmbedderKind(...)`` and is
registered by existing.

Why: an embedder used to touch four places in two rooms (the forms text and a branch of the spec parser,
the opener's if-chain, the class, and a hand-written list in the studies' ``--embedder`` help); now a
kind's forms, the reading of what follows ``KIND:`` and its opener are declared together, and
:func:`nomad_lab.retrieval.embedder_spec.parse_embedder_spec`,
:func:`nomad_lab.retrieval.embedding.open_embedder` and every ``--embedder`` help text only look them up.
A new embedder is one module in this package (``tests/retrieval/test_embedder_kinds.py`` drops one in).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from nomad_lab.core.module_walk import claimed_kinds

PACKAGES = (__name__,)
"""Where kinds are looked for; a test adds a temporary package to show that one module is enough."""


@dataclass(frozen=True)
class EmbedderKind:
    """One kind of embedder.

    ``name`` is the word before the first ``:`` of its specs; ``forms`` are shown in help texts and
    errors. ``parse(text, rest, options)`` reads ``rest`` (what follows ``name:``, options cut off) into
    an ``EmbedderSpec`` or raises ``embedder_spec.bad_embedder``; ``open(spec, device)`` makes the
    :class:`~nomad_lab.retrieval.embedder_base.Embedder`, importing its model library only then.
    """

    name: str
    forms: tuple[str, ...]
    parse: Callable[[str, str, Mapping[str, str]], Any]
    open: Callable[[Any, str], Any]


def kinds() -> dict[str, EmbedderKind]:
    """Every registered kind by spec word, in module order; two modules claiming one word are refused."""
    return claimed_kinds(PACKAGES, EmbedderKind, lambda kind: (kind.name,), what="embedder kind ")
