"""Time ``goldens draft`` (templates, no model) on the repository's folders and, optionally, a big library.

The issue's target is a 50 MB library's templated drafting in at most 10 minutes on 2 cores; this
measures megabytes per second on each folder (the two golden corpora and ``datasets/library_growth``,
which no golden uses) and on ``--big DIR``, a library built from installed documentation with
``nomad-lab library build --source --add DIR ... --out DIR`` (see docs/label_free.md).

    flock runs/heavy.lock python benchmarks/drafting_throughput.py --big runs/biglib

Writes ``results/label_free/drafting.json`` and ``drafting.md`` (headed by the command, the machine and
its load while it ran) and their provenance; the drafts go to a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from _measure import load_line, machine_line, record

from nomad_lab.data.drafts import DraftOptions, draft_goldens, read_corpus, write_drafts
from nomad_lab.eval import machine_load

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {
    "default corpus": (ROOT / "datasets/corpus", ()),
    "pydocs corpus": (ROOT / "datasets/corpora/pydocs/corpus", ("coding",)),
    "library_growth (no goldens)": (ROOT / "datasets/library_growth", ()),
}
TARGET_MB, TARGET_SECONDS = 50, 600


def time_folder(name: str, folder: Path, skip: tuple[str, ...], out: Path) -> dict:
    started = time.perf_counter()
    corpus = read_corpus(folder)
    result = draft_goldens(corpus, (), DraftOptions(bank_skip=skip))
    write_drafts(out, result, corpus)
    seconds = time.perf_counter() - started
    megabytes = result.bytes / 1e6
    return {
        "folder": name,
        "path": os.path.relpath(folder, ROOT) if folder.is_relative_to(ROOT) else str(folder),
        "documents": result.documents,
        "megabytes": round(megabytes, 2),
        "drafts": len(result.drafts),
        "byKind": result.counts(),
        "duplicatesDropped": result.duplicates,
        "seconds": round(seconds, 2),
        "mbPerSecond": round(megabytes / seconds, 3),
        "secondsFor50MB": round(TARGET_MB / (megabytes / seconds), 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=Path, help="a big library folder (library build output) to time too")
    parser.add_argument("--out", type=Path, default=ROOT / "results/label_free", help="output folder")
    args = parser.parse_args()
    folders = dict(FOLDERS)
    if args.big:
        folders["library build (big)"] = (args.big, ())
    rows = []
    start = machine_load.mark()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, (folder, skip)) in enumerate(folders.items()):
            rows.append(time_folder(name, folder, skip, Path(tmp) / str(i)))
            print(json.dumps(rows[-1]))
    load = machine_load.load_between(start, machine_load.mark())
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    out = {
        "command": "python benchmarks/drafting_throughput.py" + (" --big DIR" if args.big else ""),
        "gitSha": sha,
        "load": load,
        "cores": os.cpu_count(),
        "targetSecondsFor50MB": TARGET_SECONDS,
        "rows": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "drafting.json").write_text(json.dumps(out, indent=1) + "\n")
    lines = [
        f"`{out['command']}`",
        "",
        machine_line(),
        "",
        load_line(load),
        "",
        "| folder | documents | MB | drafts | near-duplicates dropped | seconds | MB/s | seconds for 50 MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['folder']} | {r['documents']:,} | {r['megabytes']:.2f} | {r['drafts']:,} | "
        f"{r['duplicatesDropped']:,} | {r['seconds']:.2f} | {r['mbPerSecond']:.3f} | "
        f"{r['secondsFor50MB']:.0f} |"
        for r in rows
    ]
    (args.out / "drafting.md").write_text("\n".join(lines) + "\n")
    for name in ("drafting.json", "drafting.md"):
        record(args.out / name)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
