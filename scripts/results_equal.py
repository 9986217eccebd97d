"""Are two results folders (or two JSON files) the same figures, timings aside?

Why: moving a study onto the result value must leave every published figure equal. This walks both
JSON documents key by key and prints each difference as a path; a key that names a timing (seconds,
milliseconds, load, a creation time) is skipped, and numbers compare by value (``5`` equals ``5.0``:
the old writers' ``default=float`` stored counts as floats). Exit 0 when equal.

    python scripts/results_equal.py results/answerability /tmp/after/answerability
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

TIMING = re.compile(r"^(seconds|timing|createdAt|loadAtStart|elapsed)|Ms$|^ms[A-Z]|Seconds$|PerSecond")


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Every path at which ``a`` and ``b`` differ (timing keys skipped)."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b)):
            if TIMING.search(key):
                continue
            if key not in a or key not in b:
                found.append(f"{where}.{key}: only in {'after' if key not in a else 'before'}")
            else:
                found += differences(a[key], b[key], f"{where}.{key}")
        return found
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items before, {len(b)} after"]
        return [
            d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{where}[{i}]")
        ]
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))
    if numbers and (a == b or (math.isnan(a) and math.isnan(b))):
        return []
    return [] if (a == b and type(a) is type(b)) else [f"{where}: {a!r} before, {b!r} after"]


def files(path: Path) -> dict[str, Path]:
    if path.is_file():
        return {path.name: path}
    return {str(p.relative_to(path)): p for p in sorted(path.rglob("*.json")) if p.name != "provenance.json"}


def main(argv: list[str]) -> int:
    before, after = (files(Path(p)) for p in argv[:2])
    problems = [
        f"{name}: only {'before' if name in before else 'after'}" for name in set(before) ^ set(after)
    ]
    for name in sorted(set(before) & set(after)):
        a, b = (json.loads(side[name].read_text(encoding="utf-8")) for side in (before, after))
        problems += [f"{name}{d}" for d in differences(a, b)]
    print("\n".join(problems) or f"equal: {len(set(before) & set(after))} JSON file(s), timings aside")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
