"""Refusal kinds, one record each: a module of this package per kind, defining ``KIND = RefusalKind(...)``.

Why one record: a kind's name, its definition, the question it asks of a gate, whether a gate passing it
is a leak or a pass, its label and its labelling key used to be typed as string tables in several study
modules, so a new kind touched about five files. Every table now reads these records (through
:mod:`nomad_lab.data.refusal_kinds`), and a new kind is one module here, found by walking this package's
``__path__`` (:func:`kind_records`), as gate families and gate input kinds are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.module_walk import modules_defining

LEAK = "leak"
PASS = "pass"


@dataclass(frozen=True)
class RefusalKind:
    """One refusal kind.

    ``counted`` says what a gate passing such a refusal is: ``leak`` (its context should never reach
    the prompt: the topicality question, the headline) or ``pass`` (on topic, so a topicality gate is
    right to pass it; only another check can tell). ``key`` is the labelling widget's key for it;
    ``tags`` the golden tags that name it beside its own name; ``order`` its place in every table (the
    headline first)."""

    name: str
    definition: str
    question: str
    counted: str
    key: str
    order: int
    tags: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.counted not in (LEAK, PASS):
            raise NomadLabError(
                f"refusal kind {self.name}: counted must be {LEAK} or {PASS}, got {self.counted!r}"
            )

    @property
    def label(self) -> str:
        """The head of its column: ``off-topic leak``, ``unanswerable pass``."""
        return f"{self.name} {self.counted}"

    @property
    def axis(self) -> str:
        """What its rate is called on an axis or in a sentence: ``leak`` or ``pass rate``."""
        return LEAK if self.counted == LEAK else "pass rate"

    @property
    def module_name(self) -> str:
        return self.name.replace("-", "_")


def kind_records() -> tuple[RefusalKind, ...]:
    """Every kind, in ``order``: the modules of this package that define ``KIND``. A module named other
    than its kind, two kinds with one name, key or order, or no leak-counted kind first, is refused."""
    found = []
    for name, module, kind in modules_defining([__name__], "KIND"):
        if not isinstance(kind, RefusalKind) or kind.module_name != name:
            raise NomadLabError(
                f"{module.__name__}: KIND must be a RefusalKind named {name.replace('_', '-')!r}"
            )
        found.append(kind)
    found.sort(key=lambda k: k.order)
    for what in ("name", "key", "order"):
        values = [getattr(k, what) for k in found]
        if len(set(values)) != len(values):
            raise NomadLabError(f"refusal kinds: two share a {what}: {values}")
    if not found or found[0].counted != LEAK:
        raise NomadLabError("refusal kinds: the first (the headline) must count a leak")
    return tuple(found)
