"""Gate specs: one string names a gate the same way in the CLI, the notebooks and Python.

Forms (each family declares its own in :mod:`nomad_lab.gate.families`)::

    floor@0.62                         the score floor; ``floor`` alone sweeps every floor of FLOOR_GRID
    cosine@0.5                         a floor on the raw cosine
    contrast@0.1                       top score minus median ≥ 0.1, all or nothing
    judge:embedded:gemma3-270m         the judge's verdict, all or nothing
    judge:ollama://h:11434/llama3:8b@0.7   the judge's P(true) ≥ 0.7
    learned:gates/x.json[@0.4]         a fitted gate file (its saved threshold unless one is given)
    floor@0.4+learned:gates/x.json     composition: every part must keep a passage (AND)

Why strings: notebook parameters and CLI flags carry strings, and a result must record exactly which
gate produced it. A backend spec holds ``:``, ``//`` and ``?``, so a target's threshold is the LAST
``@NUMBER``, and a ``+`` splits a composition only where a family word follows it (``openai+noformat://``
stays one backend spec). Standard library only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate.families import OMIT_SWEEP, Family, families


class GateSpecError(NomadLabError, ValueError):
    """A malformed gate spec; the one-line message names the problem and lists the accepted forms."""


def accepted_forms() -> str:
    return ", ".join(f.form for f in families().values()) + "; A+B keeps what both keep; no number: sweep"


def _bad(text: str, why: str) -> GateSpecError:
    return GateSpecError(f"bad gate spec {text!r}: {why} (accepted: {accepted_forms()})")


def format_number(value: float) -> str:
    """The shortest text that reads back as ``value`` (``0.62``, ``1``, ``0.125``)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


@dataclass(frozen=True)
class GateAtom:
    """One gate: its family word, its target (a backend spec, a file) and its number (None: omitted)."""

    family: str
    target: str | None = None
    value: float | None = None

    def __str__(self) -> str:
        text = self.family + (f":{self.target}" if self.target is not None else "")
        return text + (f"@{format_number(self.value)}" if self.value is not None else "")

    @property
    def kind(self) -> Family:
        return families()[self.family]

    @property
    def sweeps(self) -> bool:
        """True when the number is omitted and that means "every operating point of the grid"."""
        return self.value is None and self.kind.omitted == OMIT_SWEEP


@dataclass(frozen=True)
class GateSpec:
    """A gate or an AND of gates; ``str()`` gives the canonical spec text."""

    atoms: tuple[GateAtom, ...]

    def __str__(self) -> str:
        return "+".join(str(a) for a in self.atoms)

    @property
    def sweeping(self) -> GateAtom | None:
        """The part whose operating point is swept, if any (at most one, checked by the parser)."""
        return next((a for a in self.atoms if a.sweeps), None)


def _number(text: str, part: str, family: Family) -> float:
    try:
        value = float(part)
    except ValueError:
        raise _bad(text, f"{family.name}: {family.value} {part!r} is not a number") from None
    if not math.isfinite(value):
        raise _bad(text, f"{family.name}: {family.value} must be finite, got {part!r}")
    high = "" if family.high is None else f", {format_number(family.high)}]"
    if value < family.low or (family.high is not None and value > family.high):
        where = f"[{format_number(family.low)}{high}" if high else f">= {format_number(family.low)}"
        raise _bad(text, f"{family.name}: {family.value} {format_number(value)} is out of range {where}")
    return value


def _atom(text: str, part: str) -> GateAtom:
    word = re.match(r"[a-z_]*", part).group(0)  # type: ignore[union-attr]
    rest = part[len(word) :]
    if not word:
        raise _bad(text, f"{part!r} does not start with a gate name")
    family = families().get(word)
    if family is None or (rest and rest[0] not in ":@"):
        raise _bad(text, f"unknown gate {part.split('@')[0].split(':')[0]!r}")
    if family.target:
        if not rest.startswith(":") or len(rest) == 1:
            raise _bad(text, f"{word} needs a target after '{word}:'")
        target, value = rest[1:], None
        head, at, tail = target.rpartition("@")
        if at and re.fullmatch(r"[-+0-9.eE]+|nan|inf", tail, re.IGNORECASE):
            target, value = head, _number(text, tail, family)
        if not target.strip():
            raise _bad(text, f"{word} needs a target after '{word}:'")
        return GateAtom(word, target, value)
    if rest.startswith(":"):
        raise _bad(text, f"{word} takes no target, only @{family.value}")
    if rest == "@":
        raise _bad(text, f"{word}: nothing after '@'")
    return GateAtom(word, None, _number(text, rest[1:], family) if rest else None)


def split_parts(text: str) -> list[str]:
    """Split a composition at each ``+`` followed by a family word (and ``:``, ``@``, ``+`` or the end)."""
    words = "|".join(sorted(families(), key=len, reverse=True))
    return re.split(rf"\+(?=(?:{words})(?:[:@+]|$))", text)


def parse_gate_spec(text: str) -> GateSpec:
    """Parse a gate spec string; anything malformed raises one :class:`GateSpecError` line."""
    if not isinstance(text, str) or not text.strip():
        raise _bad(str(text), "empty")
    text = text.strip()
    parts = split_parts(text)
    if any(not p for p in parts) or text.endswith("+"):
        raise _bad(text, "empty part around '+'")
    atoms = tuple(_atom(text, p) for p in parts)
    if sum(a.sweeps for a in atoms) > 1:
        raise _bad(text, "at most one part may omit its number (the swept one)")
    return GateSpec(atoms)
