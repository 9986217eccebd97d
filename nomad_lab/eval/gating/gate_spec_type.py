"""The GATE_SPEC parameter type: a gate spec parsed and checked at the edge, before any work.

Why here and not in the parser: the parser (:mod:`nomad_lab.gate.spec`) knows the grammar, but whether
``ce:nonexistent-model`` names a model, or ``learned:gates/x.json`` a file, is known only to the input
kind that would read it (:mod:`nomad_lab.eval.gating.inputs`). So a spec given to a study, ``sweep`` or
``gate apply`` is parsed, then each input it needs is checked by its kind's ``check(key)`` (a gate file
or model path that does not exist, a model name no loader knows), without loading a model or reading a
run: a typo is refused in the first second instead of after minutes of retrieval. A judge's key is not
checked: it names cached verdicts, which need no model here.
"""

from __future__ import annotations

from nomad_lab.core.errors import NomadLabError
from nomad_lab.eval.gating.inputs import check_needs
from nomad_lab.gate.apply import spec_needs
from nomad_lab.gate.spec import GateSpec, accepted_forms, parse_gate_spec


def GATE_SPEC(text: str | GateSpec) -> GateSpec:
    """``text`` parsed, and every input it needs checked; anything wrong is one :class:`NomadLabError`
    line (not a ValueError, which argparse would turn into a bare "invalid value"), naming the spec.
    ``str()`` of the result is the canonical text results record."""
    try:
        spec = text if isinstance(text, GateSpec) else parse_gate_spec(text)
        check_needs(spec_needs(spec))
    except NomadLabError as exc:
        message = str(exc)
        if not message.startswith("bad gate spec"):
            message = f"gate spec {str(text)!r}: {message}"
        raise NomadLabError(message) from None
    return spec


def gate_spec_forms() -> str:
    """The accepted forms, for help texts."""
    return accepted_forms()
