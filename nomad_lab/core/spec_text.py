"""A parameter type for spec strings (a backend, an embedder): checked at the edge, kept as text.

Why text and not the parsed value: results, verdict caches and provenance cite a model by its spec string,
so the string is what travels; but a typo must fail where it is typed (a CLI option, a notebook parameter),
with the accepted forms, not deep inside a study. ``forms`` is read from the kind's registry when a help
text is generated, so a newly registered kind shows up there too. Standard library only.
"""

from __future__ import annotations

from argparse import ArgumentTypeError
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SpecText:
    """``SpecText(parse, forms)("ollama://h:1/m")`` parses and returns the stripped text; ``forms()``
    lists the accepted forms for help texts.

    A spec the parser refuses raises ``ArgumentTypeError`` with the parser's message, the one exception
    argparse shows as it is (``argument --embedder: embedder spec 'x': ...``) instead of a bare "invalid
    value"."""

    parse: Callable[[str], Any]
    forms: Callable[[], list[str]]

    def __call__(self, text: str) -> str:
        try:
            self.parse(text)
        except ValueError as exc:
            raise ArgumentTypeError(str(exc)) from None
        return text.strip()
