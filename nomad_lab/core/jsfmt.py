"""JavaScript-compatible rendering of numbers and JSON, so hashes and dumps match the reference byte for byte.

The reference system is TypeScript: its corpus fingerprint interpolates numbers with template literals
(``2``, not ``2.0``) and its reports and candidate dumps are written with ``JSON.stringify(x, null, 2)``.
Python's ``str(2.0)`` and ``json.dumps`` differ in small ways (``2.0``, ``1e-07``, ``NaN``), and any such
difference changes a SHA-256 or breaks a byte-level comparison. Standard library only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["js_json_dumps", "js_number"]


def js_number(value: float | int) -> str:
    """Render a number the way JavaScript's ``String(n)`` does.

    Why: ``String(2)`` is ``"2"``, ``String(0.1)`` is ``"0.1"``, ``String(1e21)`` is ``"1e+21"`` and
    ``String(1e-7)`` is ``"1e-7"``. Both languages print the shortest round-tripping digits, so only the
    choice between positional and exponent notation (JS: exponent below 1e-6 or from 1e21) and the
    exponent's spelling differ.
    """
    if isinstance(value, bool):
        raise TypeError("js_number takes a number, not a bool")
    if isinstance(value, int):
        value = float(value) if abs(value) >= 10**21 else value
        if isinstance(value, int):
            return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"  # String(-0) is "0" as well
    sign = "-" if value < 0 else ""
    digits, exponent = _shortest_digits(abs(value))
    # n = position of the decimal point relative to the digit string (ECMA-262 Number::toString).
    k = len(digits)
    n = exponent + k
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def _shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-trip digit string and exponent such that value == int(digits) * 10**exponent."""
    mantissa, _, exp = repr(value).partition("e")
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    exponent = (int(exp) if exp else 0) - len(frac)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return stripped, exponent


def js_json_dumps(obj: Any, indent: int = 2) -> str:
    """Serialize like ``JSON.stringify(obj, null, indent)``.

    Why not ``json.dumps``: it writes ``1.0`` for a float that JS writes as ``1``, ``1e-07`` for ``1e-7``,
    and ``NaN`` where JS writes ``null``. Strings are escaped by ``json.dumps`` with ``ensure_ascii=False``,
    which matches JS for everything but lone surrogates (escaped here as JS does).
    """
    return _dump(obj, indent, 0)


def _dump(obj: Any, indent: int, level: int) -> str:
    if obj is None or obj is True or obj is False:
        return "null" if obj is None else ("true" if obj else "false")
    if isinstance(obj, int | float):
        if isinstance(obj, float) and not math.isfinite(obj):
            return "null"
        return js_number(obj)
    if isinstance(obj, str):
        return _dump_string(obj)
    pad = "\n" + " " * (indent * (level + 1))
    close = "\n" + " " * (indent * level)
    if isinstance(obj, Mapping):
        if not obj:
            return "{}"
        items = [f"{_dump_string(str(k))}: {_dump(v, indent, level + 1)}" for k, v in obj.items()]
        return "{" + pad + ("," + pad).join(items) + close + "}"
    if isinstance(obj, list | tuple):
        if not obj:
            return "[]"
        items = [_dump(v, indent, level + 1) for v in obj]
        return "[" + pad + ("," + pad).join(items) + close + "]"
    raise TypeError(f"cannot serialize {type(obj).__name__} to JSON")


def _dump_string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    if any("\ud800" <= ch <= "\udfff" for ch in encoded):
        encoded = "".join(f"\\u{ord(ch):04x}" if "\ud800" <= ch <= "\udfff" else ch for ch in encoded)
    return encoded
