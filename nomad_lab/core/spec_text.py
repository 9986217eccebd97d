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

from nomad_lab.core.errors import NomadLabError


@dataclass(frozen=True)
class SpecText:
    """``SpecText(parse, forms)("ollama://h:1/m")`` parses and returns the stripped text; ``forms()``
    lists the accepted forms for help texts.

    A spec the parser refuses raises :class:`NomadLabError` with the parser's message (which lists the
    forms): not a ValueError, which argparse would turn into a bare "invalid value" usage error, so the
    CLI prints it as its one clean error line, as it does when a spec is refused deeper down."""

    parse: Callable[[str], Any]
    forms: Callable[[], list[str]]

    def __call__(self, text: str) -> str:
        try:
            self.parse(text)
        except ValueError as exc:
            raise NomadLabError(str(exc)) from None
        return text.strip()
