"""JavaScript string semantics the seed relies on, reproduced with the standard library.

The reference system is TypeScript, so its whitespace is ECMAScript's ``\\s`` (which differs from
Python's: JS includes U+FEFF and excludes U+001C–U+001F and U+0085), its ``trim()`` strips that same
set, its ``/[^\\p{L}\\p{N}]+/u`` splits on Unicode general categories, and its ``length`` counts UTF-16
code units. Everything here exists so the pure core returns what the seed returns.
"""

from __future__ import annotations

import re
import unicodedata

# ECMAScript WhiteSpace + LineTerminator: the set matched by `\s` and stripped by `trim()`.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
JS_WHITESPACE_CLASS = "[" + re.escape(JS_WHITESPACE) + "]"
_WS_RUN = re.compile(JS_WHITESPACE_CLASS + "+")


def js_trim(text: str) -> str:
    """``String.prototype.trim`` (Python's ``str.strip()`` uses a different whitespace set)."""
    return text.strip(JS_WHITESPACE)


def js_collapse_whitespace(text: str) -> str:
    """``text.replace(/\\s+/g, ' ')``."""
    return _WS_RUN.sub(" ", text)


def _is_letter_or_number(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LN"


def js_split_non_alnum(text: str) -> list[str]:
    """``text.split(/[^\\p{L}\\p{N}]+/u)``, including the empty strings JS keeps at either end."""
    parts: list[str] = []
    current: list[str] = []
    in_separator = False
    for ch in text:
        if _is_letter_or_number(ch):
            current.append(ch)
            in_separator = False
        elif not in_separator:
            parts.append("".join(current))
            current = []
            in_separator = True
    parts.append("".join(current))
    return parts


def utf16_len(text: str) -> int:
    """JS ``length``: astral characters count twice (a surrogate pair)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def js_parse_int(raw: object) -> int | None:
    """``parseInt(String(raw), 10)``: leading digits after optional whitespace and sign, else None."""
    match = re.match(JS_WHITESPACE_CLASS + r"*([+-]?\d+)", str(raw))
    return int(match.group(1)) if match else None


def js_parse_float(raw: str) -> float | None:
    """``parseFloat``: the longest leading decimal literal, else None (JS would give NaN)."""
    match = re.match(JS_WHITESPACE_CLASS + r"*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)", raw)
    return float(match.group(1)) if match else None
