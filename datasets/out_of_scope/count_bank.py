"""Print the out-of-scope bank's counts per category, as Markdown (standard library only).

Usage (from the repository root)::

    python datasets/out_of_scope/count_bank.py [path/to/bank.jsonl]

The table is pasted into ``datasets/out_of_scope/README.md``; the bank's own test checks the same file.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from pathlib import Path

BANK = Path(__file__).resolve().parent / "bank.jsonl"


def main(path: Path) -> None:
    rows = [
        json.loads(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.strip().startswith("//")
    ]
    by_category: dict[str, list[str]] = {}
    for row in rows:
        category = next(tag for tag in row["tags"] if tag != "off-topic")
        by_category.setdefault(category, []).append(row["query"])
    print(f"{path.name}: {len(rows)} questions, {len(by_category)} categories")
    print()
    print("| category | questions | median chars | shortest | longest | non-ASCII |")
    print("|---|---:|---:|---:|---:|---:|")
    for category, queries in by_category.items():
        lengths = [len(q) for q in queries]
        non_ascii = sum(not q.isascii() for q in queries)
        print(
            f"| {category} | {len(queries)} | {statistics.median(lengths):g} | {min(lengths)} "
            f"| {max(lengths)} | {non_ascii} |"
        )
    refusals = Counter(bool(row.get("expectRefusal")) for row in rows)
    print()
    print(f"expectRefusal true: {refusals[True]}, false: {refusals[False]}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else BANK)
