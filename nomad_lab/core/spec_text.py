"""A parameter type for spec strings (a backend, an embedder): checked at the edge, kept as text.

Why text and not the parsed value: results, verdict caches and provenance cite a model by its spec string,
so the string is what travels; but a typo must fail where it is typed (a CLI option, a notebook parameter),
with the accepted forms, not deep inside a study. ``forms`` is read from the kind's registry when a help
text is generated, so a newly registered kind shows up there too. Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SpecText:
    """``SpecText(parse, forms)("ollama://h:1/m")`` parses (a refused spec raises the parser's
    ValueError, whose message lists the forms) and returns the stripped text; ``forms()`` lists the
    accepted forms for help texts."""

    parse: Callable[[str], Any]
    forms: Callable[[], list[str]]

    def __call__(self, text: str) -> str:
        self.parse(text)
        return text.strip()
