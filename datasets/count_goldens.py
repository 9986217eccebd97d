"""Print golden counts per suite and per tag, and a corpus summary (standard library only).

Usage::

    python datasets/count_goldens.py                          # the default corpus and suites
    python datasets/count_goldens.py CORPUS_DIR GOLDENS_DIR   # another corpus in the same format

The output is Markdown, pasted into ``datasets/README.md`` (or the other corpus's README).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from pathlib import Path

DATASETS = Path(__file__).resolve().parent


def load(path: Path) -> list[dict]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("//"):
            rows.append(json.loads(line))
    return rows


def main(argv: list[str]) -> None:
    if len(argv) == 3:
        corpus_dir, goldens_dir = Path(argv[1]), Path(argv[2])
        corpus = sorted(corpus_dir.glob("*.md"))
        sizes = [len(p.read_text(encoding="utf-8")) for p in corpus]
        print(
            f"corpus: {len(corpus)} docs, {sum(sizes)} characters "
            f"(min {min(sizes)}, median {statistics.median(sizes):.0f}, max {max(sizes)} per doc)"
        )
    else:
        goldens_dir = DATASETS / "goldens"
        corpus = sorted((DATASETS / "corpus").glob("*.md"))
        distractors = [p for p in corpus if p.stem.startswith("distractor-")]
        growth = sorted((DATASETS / "library_growth").glob("*.md"))
        print(
            f"corpus: {len(corpus)} docs ({len(corpus) - len(distractors)} domain incl. the poem, "
            f"{len(distractors)} distractors); library_growth: {len(growth)} books"
        )
    print()
    print("| suite | goldens | expectRefusal | answerable |")
    print("|---|---:|---:|---:|")
    suites = {p.stem: load(p) for p in sorted(goldens_dir.glob("*.jsonl"))}
    for name, rows in suites.items():
        refusals = sum(bool(r.get("expectRefusal")) for r in rows)
        print(f"| {name} | {len(rows)} | {refusals} | {len(rows) - refusals} |")
    for name, rows in suites.items():
        tags = Counter(t for r in rows for t in r.get("tags", []))
        print()
        ordered = sorted(tags.items(), key=lambda x: (-x[1], x[0]))
        print(f"{name} tags: " + ", ".join(f"{t} {n}" for t, n in ordered))


if __name__ == "__main__":
    main(sys.argv)
