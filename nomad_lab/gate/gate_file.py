"""A gate file on disk: one indented JSON object whose ``format`` names what kind of gate it holds.

Why one writer and one reader: learned gates and answerability gates are both files a gate spec names
(``learned:PATH``, ``answer:PATH``), and a missing, foreign or incomplete one must fail the same way for
both, as one error line naming the file; only the format and the words for the kind differ.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from nomad_lab.core.errors import NomadLabError

T = TypeVar("T")


def write_gate_file(path: str | Path, fmt: str, record: Mapping[str, Any]) -> Path:
    """Write ``record`` under ``{"format": fmt}``, making the folder; the path written."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"format": fmt, **record}, indent=1) + "\n")
    return out


def read_gate_file(path: str | Path, fmt: str, build: Callable[..., T], missing: str, foreign: str) -> T:
    """``build(**fields)`` of the file's fields (its format dropped).

    A missing file is ``"{path}: no such {missing}"``, one of another format ``"{path}: not {foreign}"``,
    one that is not JSON or whose fields ``build`` refuses is likewise one line naming the file.
    """
    where = str(path)
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise NomadLabError(f"{where}: no such {missing}") from None
    except json.JSONDecodeError as exc:
        raise NomadLabError(f"{where}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(data, dict) or data.pop("format", None) != fmt:
        raise NomadLabError(f"{where}: not {foreign} (expected format {fmt!r})")
    try:
        return build(**data)
    except TypeError as exc:
        raise NomadLabError(f"{where}: {exc}") from None
