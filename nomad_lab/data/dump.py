"""The reference's candidate dump (SPEC §2.5): the interchange format of retrieval runs.

:func:`validate_dump` names ``<file>: <field path>`` for the first problem; :func:`load_dump` adds the
line of a JSON error. The store imports and exports dumps; the gate reads pools from them.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.first_run import first_run_line
from nomad_lab.data.corpus import is_fingerprint
from nomad_lab.data.golden_suites import check_doc_id
from nomad_lab.data.refusal_kinds import REFUSAL_KINDS

DUMP_PARAM_KEYS = ("topK", "scoreThreshold", "minFinalScore", "kValues")


class DumpError(NomadLabError, ValueError):
    """A candidate dump is malformed; the message names the file and the field."""


def _is_number(value: Any) -> bool:
    """A JSON number; Python's json also reads NaN and Infinity, which no reference dump holds."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def validate_dump(dump: Any, source: str = "<dump>") -> None:
    """Raise :class:`DumpError` naming ``<source>: <field path>`` for the first problem found."""

    def fail(where: str, why: str) -> None:
        raise DumpError(f"{source}: {where}: {why}")

    if not isinstance(dump, Mapping):
        fail("top level", f"a candidate dump is a JSON object, got {type(dump).__name__}")
    for key in ("fingerprint", "params", "pools"):
        if key not in dump:
            fail(key, "missing (is this a candidate dump written by eval retrieval --dump?)")
    if not is_fingerprint(dump["fingerprint"]):
        fail("fingerprint", f"expected 16 lowercase hex characters, got {dump['fingerprint']!r}")
    params = dump["params"]
    if not isinstance(params, Mapping):
        fail("params", "expected an object")
    for key in DUMP_PARAM_KEYS:
        if key not in params:
            fail(f"params.{key}", "missing")
    for key in ("topK", "scoreThreshold", "minFinalScore"):
        if not _is_number(params[key]):
            fail(f"params.{key}", f"expected a number, got {params[key]!r}")
    if not isinstance(params["kValues"], list) or not all(_is_number(k) for k in params["kValues"]):
        fail("params.kValues", "expected an array of numbers")
    pools = dump["pools"]
    if not isinstance(pools, list):
        fail("pools", "expected an array")
    seen: set[str] = set()
    for i, pool in enumerate(pools):
        where = f"pools[{i}]"
        if not isinstance(pool, Mapping):
            fail(where, "expected an object")
        if not isinstance(pool.get("id"), str) or not pool["id"]:
            fail(f"{where}.id", "expected a non-empty string")
        if pool["id"] in seen:
            fail(f"{where}.id", f"duplicate id {pool['id']!r}")
        seen.add(pool["id"])
        for key in ("tags", "relevantDocIds"):
            value = pool.get(key)
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                fail(f"{where}.{key}", "expected an array of strings")
        for k, doc_id in enumerate(pool["relevantDocIds"]):
            if problem := check_doc_id(doc_id):
                fail(f"{where}.relevantDocIds[{k}]", f"doc id {doc_id!r} {problem}")
        if not isinstance(pool.get("expectRefusal"), bool):
            fail(f"{where}.expectRefusal", f"expected true or false, got {pool.get('expectRefusal')!r}")
        kind = pool.get("refusalKind")
        if kind is not None and (not pool["expectRefusal"] or kind not in REFUSAL_KINDS):
            fail(
                f"{where}.refusalKind",
                f"expected one of {', '.join(REFUSAL_KINDS)} on a refusal (an extension of the reference's "
                f"dump, optional), got {kind!r}",
            )
        candidates = pool.get("candidates")
        if not isinstance(candidates, list):
            fail(f"{where}.candidates", "expected an array")
        for j, candidate in enumerate(candidates):
            cwhere = f"{where}.candidates[{j}]"
            if not isinstance(candidate, Mapping):
                fail(cwhere, "expected an object")
            if "docId" not in candidate or not (
                candidate["docId"] is None or isinstance(candidate["docId"], str)
            ):
                fail(f"{cwhere}.docId", f"expected a string or null, got {candidate.get('docId')!r}")
            if candidate["docId"] is not None and (problem := check_doc_id(candidate["docId"])):
                fail(f"{cwhere}.docId", f"doc id {candidate['docId']!r} {problem}")
            for key in ("score", "semanticScore"):
                if not _is_number(candidate.get(key)):
                    fail(f"{cwhere}.{key}", f"expected a finite number, got {candidate.get(key)!r}")


def load_dump(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a dump file; errors name the file and, for JSON errors, the line."""
    source = str(path)
    try:
        dump = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DumpError(first_run_line(f"{source}: no such dump yet", dump=path)) from None
    except OSError as exc:
        raise DumpError(f"{source}: cannot read: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise DumpError(f"{source}: not UTF-8 text: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise DumpError(f"{source}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from exc
    validate_dump(dump, source)
    return dump
